// Paged attention, unrolled: one QK -> SF -> PV -> UP group per sequence and
// query tile, each kernel covering all the sequence's KV blocks at once (the
// blocks are consecutive rows of the caches in this variant), in a manual
// scope with explicit dependencies.
#include "pa_common.h"

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    pa::Setup s(args);
    TensorCreateInfo tile_ci(s.tile, 2, DataType::FLOAT32), row_ci(s.row, 1, DataType::FLOAT32);
    for (uint32_t b = 0; b < s.batch; b++) {
        const uint32_t len = s.seq_len(b);
        const uint32_t blocks = (len + s.block_size - 1) / s.block_size;
        const uint32_t first = s.block_of(b, 0);
        uint32_t span[2] = {s.q_tile, blocks * s.block_size};
        TensorCreateInfo sij_ci(span, 2, DataType::FLOAT32), pij_ci(span, 2, s.dtype);
        for (uint32_t q0 = 0; q0 < s.heads; q0 += s.q_tile) {
            PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
                uint32_t at[2] = {b * s.heads + q0, 0};
                ChipTensor qi = s.query.view(s.tile, at), out_i = s.out.view(s.tile, at);
                TaskOutputTensors acc = alloc_tensors(tile_ci, row_ci, row_ci);
                ChipTensor kj = s.kv_block(s.key_cache, first, blocks * s.block_size);
                ChipTensor vj = s.kv_block(s.value_cache, first, blocks * s.block_size);

                CoreTaskArgs qk;
                qk.add_input(qi, kj);
                qk.add_output(sij_ci);
                TaskOutputTensors sij = rt_submit_aic_task(pa::kQK, qk);

                CoreTaskArgsWithDeps<2> sf;
                sf.add_input(sij.get_ref(0));
                sf.add_output(pij_ci, row_ci, row_ci);
                sf.add_dep(sij.task_id());
                sf.add_scalar(s.scale);
                TaskOutputTensors p = rt_submit_aiv_task(pa::kSF, sf);

                CoreTaskArgsWithDeps<2> pv;
                pv.add_input(p.get_ref(0), vj);
                pv.add_output(tile_ci);
                pv.add_dep(p.task_id());
                TaskOutputTensors o = rt_submit_aic_task(pa::kPV, pv);

                CoreTaskArgsWithDeps<3> up;
                up.add_input(p.get_ref(1), p.get_ref(2), o.get_ref(0));
                up.add_inout(acc.get_ref(2), acc.get_ref(1), acc.get_ref(0), out_i);
                up.add_dep(p.task_id(), o.task_id(), acc.task_id());
                rt_submit_aiv_task(pa::kUP, up);
            }
        }
    }
}
