#loc1 = loc("x")
module @jit_add_one_scalar attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32> loc("x")) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @cyxla_test_add_one(%arg0) {mhlo.backend_config = {}, operand_layouts = [dense<> : tensor<0xindex>], result_layouts = [dense<> : tensor<0xindex>]} : (tensor<f32>) -> tensor<f32> loc(#loc2)
    return %0 : tensor<f32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(add_one_scalar)/ffi_call")
#loc3 = loc("jit(add_one_scalar)")
