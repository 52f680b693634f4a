#loc1 = loc("args[0]")
module @jit_inplace_set0_aliased_f32 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32> loc("args[0]")) -> (tensor<3x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @inplace_set0_cpp(%arg0) {mhlo.backend_config = {value = 1.000000e-01 : f64}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<3x4xf32>) -> tensor<3x4xf32> loc(#loc2)
    return %0 : tensor<3x4xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(inplace_set0_aliased_f32)/ffi_call")
#loc3 = loc("jit(inplace_set0_aliased_f32)")
