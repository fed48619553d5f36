"""Does some work, then fails: the recorder must still write the partial profile."""


def doomed_work():
    total = sum(i * i for i in range(20000))
    return total


def fail():
    raise ValueError("boom from the script")


if __name__ == "__main__":
    doomed_work()
    fail()
