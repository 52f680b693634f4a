#loc1 = loc("args[0]")
module @jit_echo_attrs attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> loc("args[0]")) -> (tensor<512xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @echo_attrs(%arg0) {mhlo.backend_config = {Zeta = 26 : i32, a_f32 = dense<[5.000000e-01, -1.250000e+00, 3.000000e+10]> : tensor<3xf32>, a_f64 = dense<[1.000000e-300, -2.500000e+00, 1.000000e+300]> : tensor<3xf64>, a_s16 = dense<[300, -300]> : tensor<2xi16>, a_s32 = dense<[1, -2, 3]> : tensor<3xi32>, a_s64 = dense<[1099511627776, -1099511627776]> : tensor<2xi64>, a_s8 = dense<[-1, 2, -128, 127]> : tensor<4xi8>, a_u16 = dense<65535> : tensor<1xui16>, a_u32 = dense<[1, 4000000000]> : tensor<2xui32>, a_u64 = dense<[0, 9223372036854777856]> : tensor<2xui64>, a_u8 = dense<[0, 255]> : tensor<2xui8>, dict = {Bias = 2.500000e-01 : f32, count = 5 : i32, inner = {deep = -7 : i64, empty = {}, s = "x"}, label = "abc"}, empty = "", f32 = -1.000000e-01 : f32, f64 = 2.7182818284590451 : f64, flag = true, name = "hello, wasm", off = false, py_float = 5.000000e-01 : f64, py_int = 7 : i64, s16 = -1600 : i16, s32 = -320000 : i32, s64 = -1099511627779 : i64, s8 = -128 : i8, u16 = 60000 : ui16, u32 = 4000000000 : ui32, u64 = 1152921504606847232 : ui64, u8 = 255 : ui8, utf8 = "h\C3\A9 \E2\9C\93"}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<3xf32>) -> tensor<512xf64> loc(#loc2)
    return %0 : tensor<512xf64> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(echo_attrs)/ffi_call")
#loc3 = loc("jit(echo_attrs)")
