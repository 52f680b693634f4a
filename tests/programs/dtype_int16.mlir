#loc1 = loc("x")
module @jit_dtype_int16 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4xi16> loc("x")) -> (tensor<2x4xi16> {jax.result_info = "result"}) {
    %0 = stablehlo.not %arg0 : tensor<2x4xi16> loc(#loc2)
    return %0 : tensor<2x4xi16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(dtype_int16)/not")
#loc3 = loc("jit(dtype_int16)")
