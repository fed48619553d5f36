"""Two allocating functions: one decorated with @profile, one profiled via --function."""


@profile  # noqa: F821  (memory_profiler's builtin, injected by perfview record)
def decorated_alloc():
    big = [0] * (2 * 1024 * 1024)
    small = [1] * 1000
    del big
    return len(small)


def named_alloc():
    data = bytearray(8 * 1024 * 1024)
    return len(data)


if __name__ == "__main__":
    decorated_alloc()
    named_alloc()
