#loc1 = loc("x")
module @jit_dtype_complex128 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4xcomplex<f64>> loc("x")) -> (tensor<2x4xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2x4xcomplex<f64>> loc(#loc2)
    return %0 : tensor<2x4xcomplex<f64>> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(dtype_complex128)/add")
#loc3 = loc("jit(dtype_complex128)")
