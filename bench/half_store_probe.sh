#!/bin/sh
# Issue 15 (2026-11-25, sixth session): why seed2's kernel of record (91033)
# ran slower with its output in half (190.91 us) than in float32 (179.66 us)
# through the harness (bench/half_out_run.sh): the same kernel but for its
# store, timed through samples/mma_conv (--out f32, f16) and measured by
# Nsight Compute's counters of the stores' path (instructions, L1 and L2
# sectors, DRAM bytes). CONFIG: the sample's --config values (default 91033's).
#   [CONFIG=v,v,...] [OUTS="f32 f16"] sh bench/half_store_probe.sh     Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup samples/mma_conv
cd build-gpu
config=${CONFIG:-128,256,64,256,64,4,1,0,2,6,8}
metrics=gpu__time_duration.sum,smsp__inst_executed_op_global_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_op_read.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg
for o in ${OUTS:-f32 f16}; do
    timeout 60 ./samples/mma_conv --template wgmma --config "$config" --out "$o" --repeat 100 > "$out/time_$o.log" 2>&1
    echo "$o exit $?: $(grep -E 'tecomp conv2d_wgmma|relative L2' "$out/time_$o.log" | tr -s ' ' | tr '\n' ' ')"
    timeout 120 ncu -k regex:mma_conv --launch-skip 2 --launch-count 1 --metrics "$metrics" \
        ./samples/mma_conv --template wgmma --config "$config" --out "$o" --repeat 3 > "$out/ncu_$o.log" 2>&1
    echo "ncu $o exit $?"
    grep -E "gpu__time|inst_executed|l1tex__t|lts__t|dram__bytes|gmma|cycles_active" "$out/ncu_$o.log" | tr -s ' '
done
