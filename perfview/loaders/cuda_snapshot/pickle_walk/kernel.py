"""The compiled pickle walker (numba, cached on disk, GIL-free): opcodes in, an object graph out.

`walk` reads the opcode stream of a protocol 2-5 pickle and does what the C unpickler does
for the opcodes that build plain data, without making a single Python object: every value is
a (kind, value) pair. Integers, floats (their bits), None and booleans are immediate; strings
and bytes are interned by content (`value` is the string's id, so a string repeated through
the memo or written twice costs nothing more); dicts, lists and tuples are graph nodes whose
contents are *runs* (one per APPEND(S) / SETITEM(S) / TUPLE*, in stream order, linked per
node). A list run whose contents equal an earlier list run's shares its items: a snapshot's
millions of `frames` lists name a few thousand distinct stacks, so they cost a run each.

The walker stops (and leaves everything as it was before that opcode) where it cannot go on:
more input is needed (MORE), an array is full (GROW: the driver grows it and calls again), an
opcode it does not do (BAIL: the caller falls back to the restricted unpickler, which knows
them all), or an import (GLOBAL / STACK_GLOBAL: REFUSED). Nothing here can run code: there
is no code to run, only numbers written into arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.loaders.cuda_snapshot.pickle_walk.store import _BASIS as _BASIS
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_BYTES as K_BYTES
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_DICT as K_DICT
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_FALSE as K_FALSE
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_FLOAT as K_FLOAT
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_INT as K_INT
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_LIST as K_LIST
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_MISSING as K_MISSING
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_NONE as K_NONE
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_STR as K_STR
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_TRUE as K_TRUE
from perfview.loaders.cuda_snapshot.pickle_walk.store import K_TUPLE as K_TUPLE
from perfview.loaders.cuda_snapshot.pickle_walk.store import _add_run, _intern, _uint
from perfview.loaders.cuda_snapshot.pickle_walk.store import rehash as rehash

# Statuses.
MORE, DONE, GROW, BAIL, TRUNC, REFUSED_GLOBAL, REFUSED_STACK_GLOBAL, REFUSED_PERSID = range(8)
# Slots of the scalar state array `st`.
SP, MSP, NODES, RUNS, ITEMS, MEMO_LEN, STRS, RESULT_K, RESULT_V, NEED_MEMO, LIST_RUNS = range(11)
N_STATE = 16


OK, SHORT = 0, 1  # `_text` / `_number` codes besides BAIL: read, or the buffer ends inside


@njit(cache=True, nogil=True)
def _text(buf, pos, op, left, ns, soff, slen, shash, sisstr, strtab):  # type: ignore[no-untyped-def]
    """(code, kind, string id, opcode length, strings after) of a (SHORT_)BINUNICODE(8) or
    (SHORT_)BINBYTES(8) at `pos`; `left` bytes follow the opcode."""
    k = 1 if (op == 0x8C or op == 0x43) else (4 if (op == 0x58 or op == 0x42) else 8)
    if left < k:
        return SHORT, 0, 0, 0, ns
    n = _uint(buf, pos + 1, k)
    if n < 0:
        return BAIL, 0, 0, 0, ns
    if left - k < n:
        return SHORT, 0, 0, 0, ns
    is_str = op == 0x8C or op == 0x58 or op == 0x8D
    sid, ns = _intern(buf, pos + 1 + k, n, is_str, soff, slen, shash, sisstr, strtab, ns)
    return OK, K_STR if is_str else K_BYTES, sid, 1 + k + n, ns


@njit(cache=True, nogil=True)
def _number(buf, pos, op, left):  # type: ignore[no-untyped-def]
    """(code, kind, value, opcode length) of a BININT(1/2), LONG1 (8 bytes at most: longer
    ones go to the unpickler) or BINFLOAT (its bits) at `pos`."""
    if op == 0x8A:
        if left < 1:
            return SHORT, 0, 0, 0
        k = int(buf[pos + 1])
        if k > 8:
            return BAIL, 0, 0, 0
        if left - 1 < k:
            return SHORT, 0, 0, 0
        v = _uint(buf, pos + 2, k)
        if 0 < k < 8 and buf[pos + 1 + k] >= 0x80:
            v -= np.int64(1) << (8 * k)
        return OK, K_INT, v, 2 + k
    k = 1 if op == 0x4B else (2 if op == 0x4D else (4 if op == 0x4A else 8))
    if left < k:
        return SHORT, 0, 0, 0
    if op == 0x47:  # BINFLOAT: big-endian bits
        u = np.uint64(0)
        for j in range(8):
            u = (u << np.uint64(8)) | np.uint64(buf[pos + 1 + j])
        return OK, K_FLOAT, np.int64(u), 9
    v = _uint(buf, pos + 1, k)
    if k == 4 and v >= 2**31:
        v -= 2**32
    return OK, K_INT, v, 1 + k


@njit(cache=True, nogil=True)
def walk(buf, pos, avail, final, st, stack, memo, nodes, runs, items, strings):  # type: ignore[no-untyped-def]
    """Walk opcodes from `pos` while buf[:avail] holds them (`final`: no more will come).
    Returns (status, position): the position of the opcode it stopped at (after STOP: DONE).
    The arrays come in tuples: stack (sk, sv, marks), memo (mk, mv), nodes (nkind, nfirst,
    nlast, nitems), runs (rs, rl, rn, rc, rh, rt), items (ik, iv), strings (soff, slen,
    shash, sisstr, strtab); `pickle_walk.Graph` holds them."""
    sk, sv, marks = stack
    mk, mv = memo
    nkind, nfirst, nlast, nitems = nodes
    rs, rl, rn, rc, rh, rt = runs
    ik, iv = items
    soff, slen, shash, sisstr, strtab = strings
    status = MORE
    sp, msp, nn, nr, ni = st[SP], st[MSP], st[NODES], st[RUNS], st[ITEMS]
    memo_len, ns, nlr = st[MEMO_LEN], st[STRS], st[LIST_RUNS]
    cap_sk, cap_marks, cap_nodes, cap_runs = len(sk), len(marks), len(nkind), len(rs)
    cap_items, cap_strs, cap_strtab, cap_rt = len(ik), len(soff), len(strtab), len(rt)
    cap_memo = len(mk)
    while True:
        if pos >= avail:
            status = TRUNC if final else MORE
            break
        if (
            sp + 2 > cap_sk or msp + 1 > cap_marks or nn + 1 > cap_nodes or nr + 1 > cap_runs
            or ni + sp > cap_items or ns + 1 > cap_strs or 2 * (ns + 1) > cap_strtab
            or 2 * (nlr + 1) > cap_rt
        ):  # fmt: skip
            status = GROW
            break
        op = buf[pos]
        left = avail - pos - 1
        fence = marks[msp - 1] if msp > 0 else 0
        step = 1
        if op == 0x68 or op == 0x6A:  # BINGET, LONG_BINGET: most opcodes; a tight loop
            bad = False
            while True:
                if op == 0x68:
                    if left < 1:
                        bad = True
                        break
                    idx = np.int64(buf[pos + 1])
                    step = 2
                else:
                    if left < 4:
                        bad = True
                        break
                    idx = np.int64(buf[pos + 1]) | (np.int64(buf[pos + 2]) << 8)
                    idx |= (np.int64(buf[pos + 3]) << 16) | (np.int64(buf[pos + 4]) << 24)
                    step = 5
                if idx >= cap_memo or mk[idx] == K_MISSING:
                    status = BAIL
                    break
                sk[sp] = mk[idx]
                sv[sp] = mv[idx]
                sp += 1
                pos += step
                if pos >= avail or sp + 2 > cap_sk:
                    break
                op = buf[pos]
                if op != 0x68 and op != 0x6A:
                    break
                left = avail - pos - 1
            if bad:
                status = TRUNC if final else MORE
            if bad or status == BAIL:
                break
            continue
        elif op == 0x94 or op == 0x71 or op == 0x72:  # MEMOIZE, BINPUT, LONG_BINPUT
            k = 0 if op == 0x94 else (1 if op == 0x71 else 4)
            if left < k:
                status = TRUNC if final else MORE
                break
            if sp <= fence:
                status = BAIL
                break
            idx = memo_len if k == 0 else _uint(buf, pos + 1, k)
            if idx >= len(mk):
                st[NEED_MEMO] = idx
                status = GROW
                break
            if mk[idx] == K_MISSING:
                memo_len += 1
            mk[idx] = sk[sp - 1]
            mv[idx] = sv[sp - 1]
            step = 1 + k
        elif op == 0x28:  # MARK
            marks[msp] = sp
            msp = msp + 1
        elif op == 0x7D or op == 0x5D or op == 0x29:  # EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE
            kind = K_DICT if op == 0x7D else (K_LIST if op == 0x5D else K_TUPLE)
            nkind[nn] = kind
            nfirst[nn] = -1
            nlast[nn] = -1
            nitems[nn] = 0
            sk[sp] = kind
            sv[sp] = nn
            sp = sp + 1
            nn += 1
        elif op == 0x61 or op == 0x65 or op == 0x73 or op == 0x75:  # APPEND(S), SETITEM(S)
            if op == 0x61 or op == 0x73:
                a = sp - (1 if op == 0x61 else 2)
            else:
                if msp == 0:
                    status = BAIL
                    break
                a = marks[msp - 1]
                fence = marks[msp - 2] if msp > 1 else 0
            if a <= fence or a > sp:
                status = BAIL
                break
            if op == 0x65 or op == 0x75:
                msp = msp - 1
            if a < sp:
                is_list = op == 0x61 or op == 0x65
                want = K_LIST if is_list else K_DICT
                if sk[a - 1] != want:
                    status = BAIL
                    break
                if not is_list:
                    if (sp - a) % 2 != 0:
                        status = BAIL
                        break
                    hashable = True
                    for j in range(a, sp, 2):
                        if sk[j] == K_DICT or sk[j] == K_LIST or sk[j] == K_TUPLE:
                            hashable = False
                    if not hashable:
                        status = BAIL
                        break
                nr, ni, nlr = _add_run(sv[a - 1], a, sp, is_list, nr, ni, nlr, sk, sv, nfirst,
                                       nlast, nitems, rs, rl, rn, rc, rh, rt, ik, iv)  # fmt: skip
                sp = a
        elif op == 0x74 or op == 0x85 or op == 0x86 or op == 0x87:  # TUPLE, TUPLE1-3
            if op == 0x74:
                if msp == 0:
                    status = BAIL
                    break
                a = marks[msp - 1]
                msp = msp - 1
            else:
                a = sp - (op - 0x84)
                if a < fence:
                    status = BAIL
                    break
            nkind[nn] = K_TUPLE
            nfirst[nn] = -1
            nlast[nn] = -1
            nitems[nn] = 0
            nn += 1
            if a < sp:
                nr, ni, nlr = _add_run(nn - 1, a, sp, False, nr, ni, nlr, sk, sv, nfirst,
                                       nlast, nitems, rs, rl, rn, rc, rh, rt, ik, iv)  # fmt: skip
            sk[a] = K_TUPLE
            sv[a] = nn - 1
            sp = a + 1
        elif op == 0x8C or op == 0x58 or op == 0x8D or op == 0x43 or op == 0x42 or op == 0x8E:
            code, kind, v, step, ns = _text(
                buf, pos, op, left, ns, soff, slen, shash, sisstr, strtab
            )
            if code != OK:
                status = (TRUNC if final else MORE) if code == SHORT else BAIL
                break
            sk[sp] = kind
            sv[sp] = v
            sp = sp + 1
        elif op == 0x4B or op == 0x4D or op == 0x4A or op == 0x8A or op == 0x47:  # ints, float
            code, kind, v, step = _number(buf, pos, op, left)
            if code != OK:
                status = (TRUNC if final else MORE) if code == SHORT else BAIL
                break
            sk[sp] = kind
            sv[sp] = v
            sp = sp + 1
        elif op == 0x4E or op == 0x88 or op == 0x89:  # NONE, NEWTRUE, NEWFALSE
            sk[sp] = K_NONE if op == 0x4E else (K_TRUE if op == 0x88 else K_FALSE)
            sv[sp] = 0
            sp = sp + 1
        elif op == 0x95:  # FRAME: only a promise that the next n bytes are there
            if left < 8:
                status = TRUNC if final else MORE
                break
            n = _uint(buf, pos + 1, 8)
            if n < 0:
                status = BAIL
                break
            if left - 8 < n:
                status = TRUNC if final else MORE
                break
            step = 9
        elif op == 0x80:  # PROTO
            if left < 1:
                status = TRUNC if final else MORE
                break
            if buf[pos + 1] > 5:
                status = BAIL
                break
            step = 2
        elif op == 0x2E:  # STOP
            if sp <= fence:
                status = BAIL
                break
            st[RESULT_K] = sk[sp - 1]
            st[RESULT_V] = sv[sp - 1]
            sp = sp - 1
            pos += 1
            status = DONE
            break
        elif op == 0x63:  # GLOBAL
            status = REFUSED_GLOBAL
            break
        elif op == 0x93:  # STACK_GLOBAL
            if sp - 2 < fence or sk[sp - 1] != K_STR or sk[sp - 2] != K_STR:
                status = BAIL
                break
            st[RESULT_K] = sv[sp - 2]
            st[RESULT_V] = sv[sp - 1]
            status = REFUSED_STACK_GLOBAL
            break
        elif op == 0x51:  # BINPERSID
            status = REFUSED_PERSID if sp > fence else BAIL
            break
        else:
            status = BAIL
            break
        pos += step
    st[SP], st[MSP], st[NODES], st[RUNS], st[ITEMS] = sp, msp, nn, nr, ni
    st[MEMO_LEN], st[STRS], st[LIST_RUNS] = memo_len, ns, nlr
    return status, pos
