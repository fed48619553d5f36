"""The compiled scanner of the trace loader (numba, cached on disk): bytes in, columns out.

`parallel.scan` drives it over a whole file on every core; `events` scans the events array,
`top` the top-level object, `tokens` holds the JSON primitives, `intern` the string tables,
`args` the passes over the kept args' text, `byte_ops` two LLVM intrinsics. Importing this
package imports no numba; its modules do.
"""
