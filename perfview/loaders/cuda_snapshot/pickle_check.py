"""A pass over a pickle's opcodes before the C unpickler sees it: work the unpickler would do
beyond what the file's bytes pay for is refused here, in one sentence.

The C unpickler trusts two things that a damaged or hostile file controls:

- A memo index (PUT, BINPUT, LONG_BINPUT): `_Unpickler_MemoPut` grows its memo array to twice
  the index and zeroes every new slot. One LONG_BINPUT of 1.4e9 in a 5.6 KB file had it write
  22 GB (minutes, most of it system time). A pickler numbers its memo 0, 1, 2…, and every
  entry costs at least two bytes (the value's opcode and the PUT), so an index beyond the
  opcode's byte offset is damage: refused.
- Hashing: a dict key or set item that is a tuple nested through shared references (the memo
  lets each level name the one below twice) hashes every path through it, 2**depth of them;
  a 1 KB pickle never finishes unpickling. The pass keeps, for each value on the stack, what
  hashing it would cost (1 for everything but tuples: a tuple costs one more than its items),
  sums what every SETITEM(S), DICT, ADDITEMS and FROZENSET would hash, and refuses a file whose
  sum exceeds `WORK_PER_BYTE` per byte.

Everything else the unpickler refuses by itself (a truncated stream, an unknown opcode, an
import, a stack underflow): where it will, the pass stops and leaves the sentence to it, so a
damaged file reads the same whichever path (this one, the compiled walker) met it first.
The pass is linear in the file and makes no object per pickled object (~0.15 µs an opcode).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from typing import Final

from perfview.core.model.errors import LoadError

# Hashing work allowed per byte of pickle: a real snapshot hashes each key once (cost 1);
# a tuple key of a few items costs a few. Far above any honest file, far below a bomb's 2**40.
WORK_PER_BYTE: Final = 64
WORK_FLOOR: Final = 1 << 20

MEMO_SENTENCE = (
    "the pickle is damaged: a memo index ({index:,}) at byte {pos:,} is beyond anything the "
    "bytes before it could have stored"
)
# What the unpickler says of a stream cut short (the walker says it too).
TRUNCATED = "the pickle is damaged or truncated (UnpicklingError)"
HASH_SENTENCE = (
    "it is a pickle whose repeated references build a dict key or set item about {work:.0e} "
    'steps to hash from {size:,} bytes (a "billion laughs" file); it is not a real CUDA '
    "memory snapshot"
)

# Opcode groups (pickletools' names). Each group is handled by one branch of `check`.
_PUSH_FIXED = {  # pushes one value; argument bytes
    ord("N"): 0, 0x88: 0, 0x89: 0, ord("]"): 0, ord("}"): 0, ord(")"): 0, 0x8F: 0,
    ord("J"): 4, ord("K"): 1, ord("M"): 2, ord("G"): 8,
}  # fmt: skip
_PUSH_COUNTED = {  # pushes one value of a counted length; bytes of the length, signed
    0x8C: (1, False), ord("C"): (1, False), ord("U"): (1, False), 0x8A: (1, False),
    ord("X"): (4, False), ord("B"): (4, False), ord("T"): (4, True), 0x8B: (4, True),
    0x8D: (8, False), 0x8E: (8, False), 0x96: (8, False),
}  # fmt: skip
_LONGS = (0x8A, 0x8B)  # LONG1, LONG4: an int's hash is not cached
_PUSH_LINE = frozenset(map(ord, "ILFSV"))  # one newline-ended argument
_PUT = {ord("q"): 1, ord("r"): 4}  # BINPUT, LONG_BINPUT (PUT "p" a line; MEMOIZE none)
# Imports, calls and out-of-band buffers: the restricted unpickler refuses each of these
# (every global refused, nothing on the stack is callable or a type, no buffers given), so the
# pass stops there. BUILD is not one of them: with a None state it does nothing and goes on.
_UNPICKLER_REFUSES = frozenset(b"ci\x93\x82\x83\x84PQR\x81\x92o\x97")
_FROM_MARK = frozenset(b"tuesdl\x90\x91")  # TUPLE APPENDS SETITEMS DICT LIST ADDITEMS FROZENSET


class Beyond(LoadError):
    """Work beyond the file's size, found at byte `pos` (the unpickler may stop earlier: the
    caller asks it about the bytes before `pos`, see `pickle_data.restricted_loads`)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def check(data: bytes) -> None:
    """Refuse (LoadError) a pickle whose memo indices or hashing outgrow its size; return
    where the C unpickler can take it from here (it ends, or the unpickler will refuse it)."""
    _Pass(data).run()


# A run of BINGETs or of LONG_BINGETs (a frames list, a dict's shared keys) is read at once.
_GETS = re.compile(rb"(?:h.)+|(?:j....)+", re.DOTALL)


def _indices(run: bytes) -> Sequence[int]:
    """The memo indices of a run of BINGETs (`h` + 1 byte) or LONG_BINGETs (`j` + 4)."""
    if run[0] == 0x68:
        return run[1::2]
    packed = bytearray(run)
    del packed[::5]
    return struct.unpack(f"<{len(packed) // 4}I", packed)


def _line_int(data: bytes, pos: int) -> tuple[int, int] | None:
    """(value, next opcode's offset) of a newline-ended decimal argument read as the
    unpickler reads it (int(): signs, spaces and underscores allowed); None where it fails."""
    end = data.find(b"\n", pos + 1)
    if end < 0:
        return None
    try:
        return int(data[pos + 1 : end]), end + 1
    except ValueError:
        return None


class _Pass:
    """One pass: the stack of hashing costs, the marks (stack heights), the memo's costs.

    Every `return` in `run` is a place where the C unpickler surely raises (so nothing after
    it runs); where the unpickler might go on, so does the pass."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.limit = WORK_PER_BYTE * len(data) + WORK_FLOOR
        self.work = 0
        self.pos = 0  # the opcode being read
        self.stack: list[int] = []
        self.marks: list[int] = []
        self.memo: dict[int, int] = {}

    def above_mark(self) -> int:
        """Values above the last mark (the unpickler's fence)."""
        return len(self.stack) - (self.marks[-1] if self.marks else 0)

    def run(self) -> None:
        data, n = self.data, len(self.data)
        stack, memo = self.stack, self.memo
        push, pos = stack.append, 0
        while pos < n:
            op = data[pos]
            self.pos = pos
            if op == 0x68 or op == 0x6A:  # BINGET, LONG_BINGET: most opcodes of a snapshot
                run = _GETS.match(data, pos)
                if run is None:
                    return  # truncated
                try:
                    stack.extend(map(memo.__getitem__, _indices(run.group())))
                except KeyError:
                    return  # the unpickler: "Memo value not found"
                pos = run.end()
            elif op in _PUSH_FIXED:
                push(1)
                pos += 1 + _PUSH_FIXED[op]
            elif op in _PUSH_COUNTED:
                k, signed = _PUSH_COUNTED[op]
                size = int.from_bytes(data[pos + 1 : pos + 1 + k], "little", signed=signed)
                if pos + k >= n or size < 0:
                    return  # the unpickler: truncated, or a negative count
                if pos + 1 + k + size > n:  # the unpickler would first allocate `size` bytes
                    raise Beyond(TRUNCATED, pos)
                push(1 + size // 8 if op in _LONGS else 1)  # an int's hash reads every digit
                pos += 1 + k + size
            elif op == 0x94 or op in _PUT or op == 0x70:  # MEMOIZE, BINPUT, LONG_BINPUT, PUT
                step = self.put(op, pos)
                if step is None:
                    return
                pos += step
            elif op in _FROM_MARK:
                if not self.from_mark(op):
                    return
                pos += 1
            elif op in _PUSH_LINE:  # INT LONG FLOAT STRING UNICODE: one value
                end = data.find(b"\n", pos + 1)
                if end < 0:
                    return
                push(1 + (end - pos) // 8)  # a decimal int's hash reads its digits too
                pos = end + 1
            elif op == 0x67:  # GET
                got = _line_int(data, pos)
                cost = memo.get(got[0]) if got else None
                if got is None or cost is None:
                    return
                push(cost)
                pos = got[1]
            elif op in _UNPICKLER_REFUSES or not self.stack_op(op):
                return
            elif op == 0x95 and pos + 9 + int.from_bytes(data[pos + 1 : pos + 9], "little") > n:
                return  # the unpickler reads a whole frame first: truncated
            else:
                pos += 2 if op == 0x80 else 9 if op == 0x95 else 1

    def put(self, op: int, pos: int) -> int | None:
        """The memo gets the top's cost; the opcode's length, None where the unpickler fails.
        An index beyond the opcode's offset is refused."""
        data = self.data
        if op == 0x94:
            index, step = len(self.memo), 1
        elif op == 0x70:
            got = _line_int(data, pos)
            if got is None or got[0] < 0:
                return None
            index, step = got[0], got[1] - pos
        else:
            k = _PUT[op]
            if pos + k >= len(data):
                return None
            index, step = int.from_bytes(data[pos + 1 : pos + 1 + k], "little"), 1 + k
        if not self.above_mark():
            return None  # the unpickler: stack underflow
        if index > pos:
            raise Beyond(MEMO_SENTENCE.format(index=index, pos=pos), pos)
        self.memo[index] = self.stack[-1]
        return step

    def from_mark(self, op: int) -> bool:
        """An opcode taking the values above the last mark; False where the unpickler fails."""
        stack, marks = self.stack, self.marks
        if not marks:
            return False  # "could not find MARK"
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        if op == 0x74:  # TUPLE: hashing it hashes its items
            stack.append(min(1 + sum(items), self.limit + 1))
        elif op in b"dl\x91":  # DICT, LIST, FROZENSET: a new value
            if op != 0x6C:  # DICT hashes every key, FROZENSET every item
                self.hash(sum(items[::2]) if op == 0x64 else sum(items))
            stack.append(1)
        else:  # APPENDS, SETITEMS, ADDITEMS: into the container below the mark
            if start <= (marks[-1] if marks else 0):
                return False  # the unpickler: stack underflow
            if op != 0x65:
                self.hash(sum(items[::2]) if op == 0x75 else sum(items))
        return True

    def stack_op(self, op: int) -> bool:
        """The opcodes that move values without reading arguments; False where the unpickler
        fails (or ends: STOP, an opcode it does not know)."""
        stack, marks = self.stack, self.marks
        if op in (0x85, 0x86, 0x87):  # TUPLE1..3
            k = op - 0x84
            if self.above_mark() < k:
                return False
            cost = 1 + sum(stack[-k:])
            del stack[-k:]
            stack.append(min(cost, self.limit + 1))
        elif op in b"asb":  # APPEND, SETITEM (a key hashed), BUILD: onto the value below
            k = 2 if op == 0x73 else 1
            if self.above_mark() < k + 1:
                return False
            if op == 0x73:
                self.hash(stack[-2])
            del stack[-k:]
        elif op == 0x28:  # MARK
            marks.append(len(stack))
        elif op == 0x30:  # POP: a value, or the mark right at the top
            if marks and marks[-1] == len(stack):
                marks.pop()
            elif not self.above_mark():
                return False
            else:
                stack.pop()
        elif op == 0x31:  # POP_MARK
            if not marks:
                return False
            del stack[marks.pop() :]
        elif op == 0x32:  # DUP
            if not self.above_mark():
                return False
            stack.append(stack[-1])
        return op in _MOVES

    def hash(self, cost: int) -> None:
        self.work += cost
        if self.work > self.limit:
            message = HASH_SENTENCE.format(work=float(self.work), size=len(self.data))
            raise Beyond(message, self.pos)


# Opcodes `stack_op` handles, plus PROTO, FRAME (its opcodes follow in line) and
# READONLY_BUFFER (the same value, read-only): everything else ends the pass.
_MOVES = frozenset(b"\x85\x86\x87asb(012\x80\x95\x98")
