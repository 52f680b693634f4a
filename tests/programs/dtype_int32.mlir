#loc1 = loc("x")
module @jit_dtype_int32 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4xi32> loc("x")) -> (tensor<2x4xi32> {jax.result_info = "result"}) {
    %0 = stablehlo.not %arg0 : tensor<2x4xi32> loc(#loc2)
    return %0 : tensor<2x4xi32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(dtype_int32)/not")
#loc3 = loc("jit(dtype_int32)")
