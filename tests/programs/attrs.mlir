#loc1 = loc("x")
module @jit_attrs attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> loc("x")) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @cyxla_test_attrs(%arg0) {mhlo.backend_config = {arr = dense<[1, 2, 3]> : tensor<3xi64>, dct = {Bias = 2.500000e-01 : f32, count = 5 : i32, label = "abc", weight = -1.500000e+00 : f64}, f32 = 1.500000e+00 : f32, f64 = 2.250000e+00 : f64, flag = true, i32 = -3 : i32, i64 = -7 : i64, name = "hello"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(#loc2)
    return %0 : tensor<2x3xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(attrs)/ffi_call")
#loc3 = loc("jit(attrs)")
