#loc = loc(unknown)
#loc1 = loc("a")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x3xcomplex<f64>> loc("a")) -> (tensor<3x4xcomplex<f64>> {jax.result_info = "result.Q"}, tensor<3xcomplex<f64>> {jax.result_info = "result.R"}) {
    %0:2 = call @qr(%arg0) : (tensor<4x3xcomplex<f64>>) -> (tensor<3x4xcomplex<f64>>, tensor<3xcomplex<f64>>) loc(#loc2)
    return %0#0, %0#1 : tensor<3x4xcomplex<f64>>, tensor<3xcomplex<f64>> loc(#loc3)
  } loc(#loc)
  func.func private @qr(%arg0: tensor<4x3xcomplex<f64>> loc(unknown)) -> (tensor<3x4xcomplex<f64>>, tensor<3xcomplex<f64>>) {
    %0:2 = stablehlo.custom_call @lapack_zgeqrf_ffi(%arg0) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([k, l], [m]) {i=4, j=3, k=4, l=3, m=3}, custom>} : (tensor<4x3xcomplex<f64>>) -> (tensor<4x3xcomplex<f64>>, tensor<3xcomplex<f64>>) loc(#loc5)
    %1 = stablehlo.transpose %0#0, dims = [1, 0] : (tensor<4x3xcomplex<f64>>) -> tensor<3x4xcomplex<f64>> loc(#loc6)
    return %1, %0#1 : tensor<3x4xcomplex<f64>>, tensor<3xcomplex<f64>> loc(#loc)
  } loc(#loc7)
} loc(#loc)
#loc2 = loc("jit(<lambda>)/jit(qr)")
#loc3 = loc("jit(<lambda>)")
#loc4 = loc("jit(<lambda>)/jit")
#loc5 = loc("geqrf")
#loc6 = loc("transpose")
#loc7 = loc("jit:"(#loc4))
