#loc1 = loc("args[0]")
module @jit_scale_any_f64_rank0 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f64> loc("args[0]")) -> (tensor<f64> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @scale_any(%arg0) {mhlo.backend_config = {factor = 1.000000e-03 : f64}, operand_layouts = [dense<> : tensor<0xindex>], result_layouts = [dense<> : tensor<0xindex>]} : (tensor<f64>) -> tensor<f64> loc(#loc2)
    return %0 : tensor<f64> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(scale_any_f64_rank0)/ffi_call")
#loc3 = loc("jit(scale_any_f64_rank0)")
