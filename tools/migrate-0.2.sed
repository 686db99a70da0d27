# tools/migrate-0.2.sed - rewrite calls to tecomp 0.1 names into 0.2 names.
#
#     sed -i -E -f tools/migrate-0.2.sed $(git ls-files '*.c' '*.h' '*.cpp' '*.md')
#
# Pure renames only (GNU sed, -E for \b), for 0.1 code: run it once (a second
# run would turn 0.2's three-argument tc_cfg_knob into tc_cfg_knob_value). The signature changes sed cannot
# make (a context added to a destroy call, a result instead of a value) are
# listed in CHANGELOG.md under 0.2.0; the compiler finds every one of them.
# The dtype renumbering (TC_FLOAT32 == 0) needs no rewrite where code names
# the values; stored numbers map through tc_dtype_code (CHANGELOG.md).
s/\btc_create_context\b/tc_context_create/g
s/\btc_destroy_context\b/tc_context_destroy/g
s/\btc_last_error\b/tc_context_error/g
s/\btc_last_result\b/tc_context_result/g
s/\btc_clear_error\b/tc_context_clear_error/g
s/\btc_create_schedule\b/tc_schedule_create/g
s/\btc_find_tensor\b/tc_tensor_find/g
s/\btc_buffer_new\b/tc_buffer_create/g
s/\btc_cubin_free\b/tc_cubin_destroy/g
s/\btc_cuda_module_unload\b/tc_cuda_module_destroy/g
s/\btc_cuda_get_function\b/tc_cuda_module_function/g
s/\btc_define_split\b/tc_cfg_define_split/g
s/\btc_define_knob\b/tc_cfg_define_knob/g
s/\btc_define_reorder\b/tc_cfg_define_reorder/g
s/\btc_define_annotate\b/tc_cfg_define_annotate/g
s/\btc_measure_submit\b/tc_measurer_submit/g
s/\btc_measure_next\b/tc_measurer_next/g
s/\btc_measure_outstanding\b/tc_measurer_outstanding/g
s/\btc_measure_cancel\b/tc_measurer_cancel/g
s/\btc_measure_stream\b/tc_measurer_stream/g
s/\btc_measure_batch\b/tc_measurer_batch/g
s/\btc_probe_device_arch\b/tc_device_arch_probe/g
s/\btc_cfg_knob\b/tc_cfg_knob_value/g
