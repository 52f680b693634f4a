#loc1 = loc("args[0]")
module @jit_statics_counter attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32> loc("args[0]")) -> (tensor<6xf32> {jax.result_info = "result[0]"}, tensor<i32> {jax.result_info = "result[1]"}, tensor<i32> {jax.result_info = "result[2]"}, tensor<i32> {jax.result_info = "result[3]"}) {
    %0:2 = stablehlo.custom_call @counter_cpp(%arg0) {mhlo.backend_config = {index = 7 : i64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<6xf32>) -> (tensor<6xf32>, tensor<i32>) loc(#loc2)
    %1:2 = stablehlo.custom_call @counter_cpp(%0#0) {mhlo.backend_config = {index = 7 : i64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<6xf32>) -> (tensor<6xf32>, tensor<i32>) loc(#loc2)
    %2:2 = stablehlo.custom_call @counter_cpp(%1#0) {mhlo.backend_config = {index = 3 : i64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<6xf32>) -> (tensor<6xf32>, tensor<i32>) loc(#loc2)
    return %2#0, %0#1, %1#1, %2#1 : tensor<6xf32>, tensor<i32>, tensor<i32>, tensor<i32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(statics_counter)/ffi_call")
#loc3 = loc("jit(statics_counter)")
