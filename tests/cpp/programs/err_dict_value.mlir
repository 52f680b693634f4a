#loc1 = loc("args[0]")
#loc2 = loc("args[1]")
module @jit_err_dict_value attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> loc("args[0]"), %arg1: tensor<3x2xi16> loc("args[1]")) -> (tensor<32xf64> {jax.result_info = "result[0]"}, tensor<2x3xf32> {jax.result_info = "result[1]"}, tensor<512xui8> {jax.result_info = "result[2]"}) {
    %0:3 = stablehlo.custom_call @attrs_cpp(%arg0, %arg1) {mhlo.backend_config = {arr = dense<[1, -2, 40]> : tensor<3xi64>, dct = {a = "abc", m = 2.500000e+00 : f64, z = 5.000000e+00 : f32}, f32arr = dense<[5.000000e-01, 1.250000e+00, -2.000000e+00]> : tensor<3xf32>, f64 = 1.250000e-01 : f64, flag = true, i32 = -9 : i32, name = "h\C3\A9llo"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x3xf32>, tensor<3x2xi16>) -> (tensor<32xf64>, tensor<2x3xf32>, tensor<512xui8>) loc(#loc3)
    return %0#0, %0#1, %0#2 : tensor<32xf64>, tensor<2x3xf32>, tensor<512xui8> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(err_dict_value)/ffi_call")
#loc4 = loc("jit(err_dict_value)")
