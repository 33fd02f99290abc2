// Paged attention in manual scopes: one manual scope per sequence and query
// tile; the dependencies are the program's own (the primitive
// set_dependencies for SF and PV, CoreTaskArgsWithDeps for UP), the tensormap
// is not consulted.
#include "pa_common.h"

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    pa::Setup s(args);
    TensorCreateInfo tile_ci(s.tile, 2, DataType::FLOAT32), row_ci(s.row, 1, DataType::FLOAT32);
    TensorCreateInfo sij_ci(s.scores, 2, DataType::FLOAT32), pij_ci(s.scores, 2, s.dtype);
    for (uint32_t b = 0; b < s.batch; b++) {
        const uint32_t len = s.seq_len(b);
        const uint32_t blocks = (len + s.block_size - 1) / s.block_size;
        for (uint32_t q0 = 0; q0 < s.heads; q0 += s.q_tile) {
            PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
                uint32_t at[2] = {b * s.heads + q0, 0};
                ChipTensor qi = s.query.view(s.tile, at), out_i = s.out.view(s.tile, at);
                TaskOutputTensors acc = alloc_tensors(tile_ci, row_ci, row_ci);
                PTO2TaskId prev_up = PTO2TaskId::invalid();
                for (uint32_t n = 0; n < blocks; n++) {
                    const uint32_t block = s.block_of(b, n);
                    const uint32_t valid = std::min(s.block_size, len - n * s.block_size);
                    ChipTensor kj = s.kv_block(s.key_cache, block, s.block_size);
                    ChipTensor vj = s.kv_block(s.value_cache, block, s.block_size);

                    CoreTaskArgs qk;
                    qk.add_input(qi, kj);
                    qk.add_output(sij_ci);
                    TaskOutputTensors sij = rt_submit_aic_task(pa::kQK, qk);

                    uint32_t valid_shape[2] = {s.q_tile, valid}, origin[2] = {0, 0};
                    ChipTensor sij_valid = sij.get_ref(0).view(valid_shape, origin);
                    CoreTaskArgs sf;
                    sf.add_input(sij_valid);
                    sf.add_output(pij_ci, row_ci, row_ci);
                    PTO2TaskId after_qk[1] = {sij.task_id()};
                    sf.set_dependencies(after_qk, 1);
                    sf.add_scalar(s.scale);
                    TaskOutputTensors p = rt_submit_aiv_task(pa::kSF, sf);

                    CoreTaskArgs pv;
                    pv.add_input(p.get_ref(0), vj);
                    pv.add_output(tile_ci);
                    PTO2TaskId after_sf[1] = {p.task_id()};
                    pv.set_dependencies(after_sf, 1);
                    TaskOutputTensors o = rt_submit_aic_task(pa::kPV, pv);

                    CoreTaskArgsWithDeps<> up;
                    up.add_input(p.get_ref(1), p.get_ref(2), o.get_ref(0));
                    up.add_inout(acc.get_ref(2), acc.get_ref(1), acc.get_ref(0), out_i);
                    up.add_dep(o.task_id());
                    if (prev_up.is_valid()) up.add_dep(prev_up);
                    if (n + 1 == blocks) up.add_dep(acc.task_id());  // keeps the accumulators to the end
                    up.add_scalar(uint64_t{n == 0}, uint64_t{n + 1 == blocks});
                    prev_up = rt_submit_aiv_task(pa::kUP, up).task_id();
                }
            }
        }
    }
}
