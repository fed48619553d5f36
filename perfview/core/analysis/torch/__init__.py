"""PyTorch analysis: what the TensorBoard profiler plugin's pages showed, from a `Timeline`.

Pure pandas/numpy over the columnar model (never imports torch or Qt). One function per page,
each returning DataFrames (column units in the name suffix: `_ns`, `_bytes`, `_pct`) or small
dataclasses:

- overview:     `overview.devices_table`, `overview.step_stats`, `overview.steps_table`
                (per-step breakdown), `overview.utilization_table`, `overview_table.overview_table`
- operators:    `op_kernels.ops_table(tl, by_shape)`, `op_kernels.op_kernels_table(tl, op, shape)`,
                `op_kernels.launches` (GPU activity → runtime → op rows), `op_kernels.call_stack`
- kernels:      `kernels.kernels_table`, `kernels.kernel_rows` (per launch), `tensor_core_share`
- memory:       `memory_alloc.memory_curves`, `allocations_table`, `memory_peaks`,
                `filter_allocations(allocs, t0, t1)`, `memory_summary`
- ranks:        `ranks.trace_files`, `rank_from_meta`/`rank_from_name`, `single_rank_table`
- jobs:         `job.reduce_rank`, `job.assemble`, `job.document`; `job_views.*_table(job)`
- advice:       `recommend.recommendations` (list of `Finding`), `recommendations_table`
"""
