module @jit_dict attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<16xf64> {jax.result_info = "result[0]"}, tensor<256xui8> {jax.result_info = "result[1]"}) {
    %0:2 = stablehlo.custom_call @dict_cpp() {mhlo.backend_config = {Alpha = 3 : i64, arr = dense<[1, 2]> : tensor<2xi64>, beta = 1.000000e+00 : f32, delta = -1.500000e+00 : f64, eps = 2 : i32, gamma = "text", zeta = true}, operand_layouts = [], result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : () -> (tensor<16xf64>, tensor<256xui8>) loc(#loc1)
    return %0#0, %0#1 : tensor<16xf64>, tensor<256xui8> loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("jit(dict)/ffi_call")
#loc2 = loc("jit(dict)")
