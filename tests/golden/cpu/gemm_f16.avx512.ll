; ModuleID = 'tilejit.gemm'
source_filename = "tilejit.gemm"

@block_shape = private constant [2 x i64] [i64 64, i64 64]
@block_shape.1 = private constant [2 x i64] [i64 128, i64 64]

; Function Attrs: nounwind
define void @tj_kernel(ptr %0, i64 %1, i64 %2) #0 {
entry:
  %3 = alloca half, i64 8192, align 64
  %4 = alloca i8, i64 32768, align 64
  %block_firsts = alloca [4 x i64], align 8
  %5 = alloca half, i64 4096, align 64
  %6 = alloca i8, i64 16384, align 64
  %7 = alloca float, i64 8192, align 64
  %8 = alloca float, i64 8192, align 64
  %9 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %9, align 8
  %10 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %11 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %10, i32 0, i32 0
  %data = load ptr, ptr %11, align 8
  %12 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %10, i32 0, i32 1, i32 0
  %13 = load i64, ptr %12, align 4
  %14 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %10, i32 0, i32 2, i32 0
  %15 = load i64, ptr %14, align 4
  %16 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %10, i32 0, i32 1, i32 1
  %17 = load i64, ptr %16, align 4
  %18 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %10, i32 0, i32 2, i32 1
  %19 = load i64, ptr %18, align 4
  %20 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %21 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %20, i32 0, i32 0
  %data1 = load ptr, ptr %21, align 8
  %22 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %20, i32 0, i32 1, i32 0
  %23 = load i64, ptr %22, align 4
  %24 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %20, i32 0, i32 2, i32 0
  %25 = load i64, ptr %24, align 4
  %26 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %20, i32 0, i32 1, i32 1
  %27 = load i64, ptr %26, align 4
  %28 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %20, i32 0, i32 2, i32 1
  %29 = load i64, ptr %28, align 4
  %30 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 2
  %31 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %30, i32 0, i32 0
  %data2 = load ptr, ptr %31, align 8
  %32 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %30, i32 0, i32 1, i32 0
  %33 = load i64, ptr %32, align 4
  %34 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %30, i32 0, i32 2, i32 0
  %35 = load i64, ptr %34, align 4
  %36 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %30, i32 0, i32 1, i32 1
  %37 = load i64, ptr %36, align 4
  %38 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %30, i32 0, i32 2, i32 1
  %39 = load i64, ptr %38, align 4
  %40 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %41 = load i64, ptr %40, align 4
  %42 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 1
  %43 = load i64, ptr %42, align 4
  %program_id = alloca [3 x i64], align 8
  %44 = srem i64 %23, 64
  %45 = icmp ne i64 %44, 0
  %46 = zext i1 %45 to i64
  %47 = sdiv i64 %23, 64
  %48 = add i64 %47, %46
  %49 = mul i64 1, %48
  %50 = sitofp i64 %48 to double
  %51 = fmul double 1.638800e+04, %50
  %52 = srem i64 %27, 64
  %53 = icmp ne i64 %52, 0
  %54 = zext i1 %53 to i64
  %55 = sdiv i64 %27, 64
  %56 = add i64 %55, %54
  %57 = mul i64 %49, %56
  %58 = sitofp i64 %56 to double
  %59 = fmul double %51, %58
  %60 = mul i64 1, %41
  %61 = fcmp ole double %59, 0x41B0000000000000
  %62 = icmp sgt i64 %60, 1
  %63 = and i1 %62, %61
  %64 = select i1 %63, i64 %57, i64 0
  %65 = mul i64 %64, 4
  %66 = add i64 0, %65
  %67 = mul i64 %64, 16384
  %68 = add i64 0, %67
  %69 = srem i64 %13, 128
  %70 = icmp ne i64 %69, 0
  %71 = zext i1 %70 to i64
  %72 = sdiv i64 %13, 128
  %73 = add i64 %72, %71
  %74 = mul i64 1, %73
  %75 = sitofp i64 %73 to double
  %76 = fmul double 3.277200e+04, %75
  %77 = srem i64 %17, 64
  %78 = icmp ne i64 %77, 0
  %79 = zext i1 %78 to i64
  %80 = sdiv i64 %17, 64
  %81 = add i64 %80, %79
  %82 = mul i64 %74, %81
  %83 = sitofp i64 %81 to double
  %84 = fmul double %76, %83
  %85 = mul i64 1, %43
  %86 = fcmp ole double %84, 0x41B0000000000000
  %87 = icmp sgt i64 %85, 1
  %88 = and i1 %87, %86
  %89 = select i1 %88, i64 %82, i64 0
  %90 = mul i64 %89, 4
  %91 = add i64 %66, %90
  %92 = mul i64 %89, 32768
  %93 = add i64 %68, %92
  %94 = add i64 %91, 63
  %95 = and i64 %94, -64
  %96 = add i64 %95, %93
  %97 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 8
  %workspace_fn = load ptr, ptr %97, align 8
  %98 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 9
  %99 = load ptr, ptr %98, align 8
  %100 = icmp sgt i64 %96, 0
  %101 = icmp ne ptr %workspace_fn, null
  %102 = and i1 %101, %100
  br i1 %102, label %then, label %join

then:                                             ; preds = %entry
  %103 = call ptr %workspace_fn(ptr %99, i64 %96, i64 %91)
  br label %join

join:                                             ; preds = %then, %entry
  %104 = phi ptr [ %103, %then ], [ null, %entry ]
  %105 = getelementptr i8, ptr %104, i64 0
  %106 = add i64 %95, 0
  %107 = getelementptr i8, ptr %104, i64 %106
  %108 = icmp sgt i64 %64, 0
  %109 = icmp ne ptr %104, null
  %110 = and i1 %109, %108
  %111 = getelementptr i8, ptr %104, i64 %66
  %112 = add i64 %95, %68
  %113 = getelementptr i8, ptr %104, i64 %112
  %114 = icmp sgt i64 %89, 0
  %115 = icmp ne ptr %104, null
  %116 = and i1 %115, %114
  %117 = sub i64 %2, %1
  %118 = call i64 @llvm.smax.i64(i64 %117, i64 1)
  %119 = sdiv i64 %1, %118
  %120 = and i64 %119, 1
  %121 = sdiv i64 %117, 2
  %122 = mul i64 %120, %121
  br label %loop

loop:                                             ; preds = %join54, %join
  %i = phi i64 [ 0, %join ], [ %330, %join54 ]
  %123 = icmp slt i64 %i, %117
  br i1 %123, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %124 = add i64 %i, %122
  %125 = sub i64 %124, %117
  %126 = icmp sge i64 %124, %117
  %127 = select i1 %126, i64 %125, i64 %124
  %128 = add i64 %1, %127
  %129 = srem i64 %128, %43
  %130 = sdiv i64 %128, %43
  %131 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %130, ptr %131, align 4
  %132 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 %129, ptr %132, align 4
  %133 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %133, align 4
  %134 = add i64 %17, 63
  br i1 false, label %then3, label %join4

loop.exit:                                        ; preds = %loop
  ret void

then3:                                            ; preds = %loop.body
  %135 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 4
  %136 = load ptr, ptr %135, align 8
  %137 = icmp ne ptr %136, null
  br i1 %137, label %then5, label %join6

join4:                                            ; preds = %join6, %loop.body
  %138 = sdiv i64 %134, 64
  %139 = sub i64 0, %134
  %140 = select i1 false, i64 0, i64 %139
  %141 = select i1 false, i64 %140, i64 %138
  %142 = mul i64 %129, 64
  %143 = mul i64 %130, 128
  %144 = icmp eq i64 %39, 1
  %145 = add i64 %143, 128
  %146 = icmp sle i64 %145, %33
  %147 = icmp sge i64 %143, 0
  %148 = and i1 %147, %146
  %149 = and i1 %144, %148
  %150 = add i64 %142, 64
  %151 = icmp sle i64 %150, %37
  %152 = icmp sge i64 %142, 0
  %153 = and i1 %152, %151
  %154 = and i1 %149, %153
  %155 = mul i64 %143, %35
  %156 = add i64 0, %155
  %157 = mul i64 %142, %39
  %158 = add i64 %156, %157
  %159 = getelementptr float, ptr %data2, i64 %158
  %160 = select i1 %154, ptr %159, ptr %7
  %161 = select i1 %154, i64 %35, i64 64
  br label %loop7

then5:                                            ; preds = %then3
  %162 = getelementptr inbounds { i32, i64, i32, i64, i64 }, ptr %136, i32 0, i32 0
  %163 = atomicrmw or ptr %162, i32 1 monotonic, align 4
  br label %join6

join6:                                            ; preds = %then5, %then3
  br label %join4

loop7:                                            ; preds = %join34, %join4
  %i10 = phi i64 [ 0, %join4 ], [ %292, %join34 ]
  %164 = icmp slt i64 %i10, %141
  br i1 %164, label %loop.body8, label %loop.exit9

loop.body8:                                       ; preds = %loop7
  %165 = icmp eq i64 %i10, 0
  %166 = add i64 %i10, 1
  %167 = icmp eq i64 %166, %141
  %168 = mul i64 %i10, 64
  %169 = icmp slt i64 %168, %23
  %170 = icmp sge i64 %168, 0
  %171 = and i1 %170, %169
  %172 = srem i64 %168, 64
  %173 = icmp eq i64 %172, 0
  %174 = and i1 %171, %173
  %175 = and i1 %110, %174
  %176 = sdiv i64 %168, 64
  %177 = mul i64 0, %48
  %178 = add i64 %177, %176
  %179 = icmp slt i64 %142, %27
  %180 = icmp sge i64 %142, 0
  %181 = and i1 %180, %179
  %182 = srem i64 %142, 64
  %183 = icmp eq i64 %182, 0
  %184 = and i1 %181, %183
  %185 = and i1 %175, %184
  %186 = sdiv i64 %142, 64
  %187 = mul i64 %178, %56
  %188 = add i64 %187, %186
  %189 = select i1 %185, i64 %188, i64 0
  %190 = getelementptr i32, ptr %105, i64 %189
  %191 = mul i64 %189, 16384
  %192 = getelementptr i8, ptr %107, i64 %191
  br i1 %185, label %then11, label %join12

loop.exit9:                                       ; preds = %loop7
  %193 = icmp sge i64 0, %141
  br i1 %193, label %then47, label %join48

then11:                                           ; preds = %loop.body8
  %194 = load atomic i32, ptr %190 acquire, align 4
  %195 = icmp eq i32 %194, 2
  br label %join12

join12:                                           ; preds = %then11, %loop.body8
  %196 = phi i1 [ %195, %then11 ], [ false, %loop.body8 ]
  %197 = xor i1 %196, true
  %198 = and i1 %185, %197
  br i1 %198, label %then13, label %join14

then13:                                           ; preds = %join12
  %199 = cmpxchg ptr %190, i32 0, i32 1 monotonic monotonic, align 4
  %200 = extractvalue { i32, i1 } %199, 1
  br label %join14

join14:                                           ; preds = %then13, %join12
  %201 = phi i1 [ %200, %then13 ], [ false, %join12 ]
  %202 = or i1 %196, %201
  %203 = select i1 %202, ptr %192, ptr %6
  %204 = xor i1 %196, true
  br i1 %204, label %then15, label %join16

then15:                                           ; preds = %join14
  %205 = icmp eq i64 %29, 1
  %206 = add i64 %168, 64
  %207 = icmp sle i64 %206, %23
  %208 = icmp sge i64 %168, 0
  %209 = and i1 %208, %207
  %210 = and i1 %205, %209
  %211 = add i64 %142, 64
  %212 = icmp sle i64 %211, %27
  %213 = icmp sge i64 %142, 0
  %214 = and i1 %213, %212
  %215 = and i1 %210, %214
  %216 = xor i1 %215, true
  br i1 %216, label %then17, label %join18

join16:                                           ; preds = %join28, %join14
  %217 = icmp slt i64 %143, %13
  %218 = icmp sge i64 %143, 0
  %219 = and i1 %218, %217
  %220 = srem i64 %143, 128
  %221 = icmp eq i64 %220, 0
  %222 = and i1 %219, %221
  %223 = and i1 %116, %222
  %224 = sdiv i64 %143, 128
  %225 = mul i64 0, %73
  %226 = add i64 %225, %224
  %227 = icmp slt i64 %168, %17
  %228 = icmp sge i64 %168, 0
  %229 = and i1 %228, %227
  %230 = srem i64 %168, 64
  %231 = icmp eq i64 %230, 0
  %232 = and i1 %229, %231
  %233 = and i1 %223, %232
  %234 = sdiv i64 %168, 64
  %235 = mul i64 %226, %81
  %236 = add i64 %235, %234
  %237 = select i1 %233, i64 %236, i64 0
  %238 = getelementptr i32, ptr %111, i64 %237
  %239 = mul i64 %237, 32768
  %240 = getelementptr i8, ptr %113, i64 %239
  br i1 %233, label %then29, label %join30

then17:                                           ; preds = %then15
  %241 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %168, ptr %241, align 4
  %242 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %142, ptr %242, align 4
  %243 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %244 = load ptr, ptr %243, align 8
  call void %244(ptr %20, i32 2, i32 2, ptr %block_firsts, ptr @block_shape, i64 0, ptr %5)
  br label %join18

join18:                                           ; preds = %then17, %then15
  %245 = mul i64 %168, %25
  %246 = add i64 0, %245
  %247 = mul i64 %142, %29
  %248 = add i64 %246, %247
  %249 = getelementptr half, ptr %data1, i64 %248
  %250 = select i1 %215, ptr %249, ptr %5
  %251 = select i1 %215, i64 %25, i64 64
  br label %loop19

loop19:                                           ; preds = %loop.exit25, %join18
  %i22 = phi i64 [ 0, %join18 ], [ %266, %loop.exit25 ]
  %252 = icmp slt i64 %i22, 64
  br i1 %252, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  br label %loop23

loop.exit21:                                      ; preds = %loop19
  br i1 %201, label %then27, label %join28

loop23:                                           ; preds = %loop.body24, %loop.body20
  %i26 = phi i64 [ 0, %loop.body20 ], [ %265, %loop.body24 ]
  %253 = icmp slt i64 %i26, 64
  br i1 %253, label %loop.body24, label %loop.exit25

loop.body24:                                      ; preds = %loop23
  %254 = mul i64 %i22, %251
  %255 = add i64 0, %254
  %256 = mul i64 %i26, 1
  %257 = add i64 %255, %256
  %258 = getelementptr inbounds half, ptr %250, i64 %257
  %259 = load half, ptr %258, align 2
  %260 = fpext half %259 to float
  %261 = add i64 0, %i22
  %262 = mul i64 %261, 64
  %263 = add i64 %262, %i26
  %264 = getelementptr inbounds float, ptr %203, i64 %263
  store float %260, ptr %264, align 4
  %265 = add nuw nsw i64 %i26, 1
  br label %loop23, !llvm.loop !0

loop.exit25:                                      ; preds = %loop23
  %266 = add nuw nsw i64 %i22, 1
  br label %loop19

then27:                                           ; preds = %loop.exit21
  store atomic i32 2, ptr %190 release, align 4
  br label %join28

join28:                                           ; preds = %then27, %loop.exit21
  br label %join16

then29:                                           ; preds = %join16
  %267 = load atomic i32, ptr %238 acquire, align 4
  %268 = icmp eq i32 %267, 2
  br label %join30

join30:                                           ; preds = %then29, %join16
  %269 = phi i1 [ %268, %then29 ], [ false, %join16 ]
  %270 = xor i1 %269, true
  %271 = and i1 %233, %270
  br i1 %271, label %then31, label %join32

then31:                                           ; preds = %join30
  %272 = cmpxchg ptr %238, i32 0, i32 1 monotonic monotonic, align 4
  %273 = extractvalue { i32, i1 } %272, 1
  br label %join32

join32:                                           ; preds = %then31, %join30
  %274 = phi i1 [ %273, %then31 ], [ false, %join30 ]
  %275 = or i1 %269, %274
  %276 = select i1 %275, ptr %240, ptr %4
  %277 = xor i1 %269, true
  br i1 %277, label %then33, label %join34

then33:                                           ; preds = %join32
  %278 = icmp eq i64 %19, 1
  %279 = add i64 %143, 128
  %280 = icmp sle i64 %279, %13
  %281 = icmp sge i64 %143, 0
  %282 = and i1 %281, %280
  %283 = and i1 %278, %282
  %284 = add i64 %168, 64
  %285 = icmp sle i64 %284, %17
  %286 = icmp sge i64 %168, 0
  %287 = and i1 %286, %285
  %288 = and i1 %283, %287
  %289 = xor i1 %288, true
  br i1 %289, label %then35, label %join36

join34:                                           ; preds = %join46, %join32
  %290 = select i1 %167, ptr %160, ptr %8
  %291 = select i1 %167, i64 %161, i64 64
  call void @tj_dot_0(ptr %276, i64 64, ptr %203, ptr %8, ptr %290, i64 %291, i1 %165)
  %292 = add nuw nsw i64 %i10, 1
  br label %loop7

then35:                                           ; preds = %then33
  %293 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %143, ptr %293, align 4
  %294 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %168, ptr %294, align 4
  %295 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %296 = load ptr, ptr %295, align 8
  call void %296(ptr %10, i32 2, i32 2, ptr %block_firsts, ptr @block_shape.1, i64 0, ptr %3)
  br label %join36

join36:                                           ; preds = %then35, %then33
  %297 = mul i64 %143, %15
  %298 = add i64 0, %297
  %299 = mul i64 %168, %19
  %300 = add i64 %298, %299
  %301 = getelementptr half, ptr %data, i64 %300
  %302 = select i1 %288, ptr %301, ptr %3
  %303 = select i1 %288, i64 %15, i64 64
  br label %loop37

loop37:                                           ; preds = %loop.exit43, %join36
  %i40 = phi i64 [ 0, %join36 ], [ %318, %loop.exit43 ]
  %304 = icmp slt i64 %i40, 128
  br i1 %304, label %loop.body38, label %loop.exit39

loop.body38:                                      ; preds = %loop37
  br label %loop41

loop.exit39:                                      ; preds = %loop37
  br i1 %274, label %then45, label %join46

loop41:                                           ; preds = %loop.body42, %loop.body38
  %i44 = phi i64 [ 0, %loop.body38 ], [ %317, %loop.body42 ]
  %305 = icmp slt i64 %i44, 64
  br i1 %305, label %loop.body42, label %loop.exit43

loop.body42:                                      ; preds = %loop41
  %306 = mul i64 %i40, %303
  %307 = add i64 0, %306
  %308 = mul i64 %i44, 1
  %309 = add i64 %307, %308
  %310 = getelementptr inbounds half, ptr %302, i64 %309
  %311 = load half, ptr %310, align 2
  %312 = fpext half %311 to float
  %313 = add i64 0, %i40
  %314 = mul i64 %313, 64
  %315 = add i64 %314, %i44
  %316 = getelementptr inbounds float, ptr %276, i64 %315
  store float %312, ptr %316, align 4
  %317 = add nuw nsw i64 %i44, 1
  br label %loop41, !llvm.loop !2

loop.exit43:                                      ; preds = %loop41
  %318 = add nuw nsw i64 %i40, 1
  br label %loop37

then45:                                           ; preds = %loop.exit39
  store atomic i32 2, ptr %238 release, align 4
  br label %join46

join46:                                           ; preds = %then45, %loop.exit39
  br label %join34

then47:                                           ; preds = %loop.exit9
  br label %loop49

join48:                                           ; preds = %loop.exit51, %loop.exit9
  %319 = xor i1 %154, true
  br i1 %319, label %then53, label %join54

loop49:                                           ; preds = %loop.body50, %then47
  %i52 = phi i64 [ 0, %then47 ], [ %325, %loop.body50 ]
  %320 = icmp slt i64 %i52, 128
  br i1 %320, label %loop.body50, label %loop.exit51

loop.body50:                                      ; preds = %loop49
  %321 = mul i64 %i52, %161
  %322 = add i64 0, %321
  %323 = add i64 %322, 0
  %324 = getelementptr inbounds float, ptr %160, i64 %323
  call void @llvm.memset.p0.i64(ptr align 4 %324, i8 0, i64 256, i1 false)
  %325 = add nuw nsw i64 %i52, 1
  br label %loop49

loop.exit51:                                      ; preds = %loop49
  br label %join48

then53:                                           ; preds = %join48
  %326 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %143, ptr %326, align 4
  %327 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %142, ptr %327, align 4
  %328 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %329 = load ptr, ptr %328, align 8
  call void %329(ptr %30, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, ptr %7)
  br label %join54

join54:                                           ; preds = %then53, %join48
  %330 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smax.i64(i64, i64) #1

; Function Attrs: noinline nounwind
define internal void @tj_dot_0(ptr %0, i64 %1, ptr noalias %2, ptr %3, ptr %4, i64 %5, i1 %6) #2 {
entry:
  %7 = alloca <16 x float>, align 64
  %8 = alloca <16 x float>, align 64
  %9 = alloca <16 x float>, align 64
  %10 = alloca <16 x float>, align 64
  %11 = alloca <16 x float>, align 64
  %12 = alloca <16 x float>, align 64
  %13 = alloca <16 x float>, align 64
  %14 = alloca <16 x float>, align 64
  %15 = alloca <16 x float>, align 64
  %16 = alloca <16 x float>, align 64
  %17 = alloca <16 x float>, align 64
  %18 = alloca <16 x float>, align 64
  %19 = alloca <16 x float>, align 64
  %20 = alloca <16 x float>, align 64
  %21 = alloca <16 x float>, align 64
  %22 = alloca <16 x float>, align 64
  %23 = alloca <16 x float>, align 64
  %24 = alloca <16 x float>, align 64
  %25 = alloca <16 x float>, align 64
  %26 = alloca <16 x float>, align 64
  %27 = alloca <16 x float>, align 64
  %28 = alloca <16 x float>, align 64
  %29 = alloca <16 x float>, align 64
  %30 = alloca <16 x float>, align 64
  br label %loop

loop:                                             ; preds = %loop.exit3, %entry
  %i = phi i64 [ 0, %entry ], [ %35, %loop.exit3 ]
  %31 = icmp slt i64 %i, 21
  br i1 %31, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %32 = mul i64 %i, 6
  br label %loop1

loop.exit:                                        ; preds = %loop
  br label %loop19

loop1:                                            ; preds = %loop.exit7, %loop.body
  %i4 = phi i64 [ 0, %loop.body ], [ %560, %loop.exit7 ]
  %33 = icmp slt i64 %i4, 1
  br i1 %33, label %loop.body2, label %loop.exit3

loop.body2:                                       ; preds = %loop1
  %34 = mul i64 %i4, 64
  br i1 %6, label %then, label %else

loop.exit3:                                       ; preds = %loop1
  %35 = add nuw nsw i64 %i, 1
  br label %loop

then:                                             ; preds = %loop.body2
  %36 = add i64 %34, 0
  %37 = add i64 %32, 0
  store <16 x float> zeroinitializer, ptr %7, align 64
  %38 = add i64 %34, 16
  %39 = add i64 %32, 0
  store <16 x float> zeroinitializer, ptr %8, align 64
  %40 = add i64 %34, 32
  %41 = add i64 %32, 0
  store <16 x float> zeroinitializer, ptr %9, align 64
  %42 = add i64 %34, 48
  %43 = add i64 %32, 0
  store <16 x float> zeroinitializer, ptr %10, align 64
  %44 = add i64 %34, 0
  %45 = add i64 %32, 1
  store <16 x float> zeroinitializer, ptr %11, align 64
  %46 = add i64 %34, 16
  %47 = add i64 %32, 1
  store <16 x float> zeroinitializer, ptr %12, align 64
  %48 = add i64 %34, 32
  %49 = add i64 %32, 1
  store <16 x float> zeroinitializer, ptr %13, align 64
  %50 = add i64 %34, 48
  %51 = add i64 %32, 1
  store <16 x float> zeroinitializer, ptr %14, align 64
  %52 = add i64 %34, 0
  %53 = add i64 %32, 2
  store <16 x float> zeroinitializer, ptr %15, align 64
  %54 = add i64 %34, 16
  %55 = add i64 %32, 2
  store <16 x float> zeroinitializer, ptr %16, align 64
  %56 = add i64 %34, 32
  %57 = add i64 %32, 2
  store <16 x float> zeroinitializer, ptr %17, align 64
  %58 = add i64 %34, 48
  %59 = add i64 %32, 2
  store <16 x float> zeroinitializer, ptr %18, align 64
  %60 = add i64 %34, 0
  %61 = add i64 %32, 3
  store <16 x float> zeroinitializer, ptr %19, align 64
  %62 = add i64 %34, 16
  %63 = add i64 %32, 3
  store <16 x float> zeroinitializer, ptr %20, align 64
  %64 = add i64 %34, 32
  %65 = add i64 %32, 3
  store <16 x float> zeroinitializer, ptr %21, align 64
  %66 = add i64 %34, 48
  %67 = add i64 %32, 3
  store <16 x float> zeroinitializer, ptr %22, align 64
  %68 = add i64 %34, 0
  %69 = add i64 %32, 4
  store <16 x float> zeroinitializer, ptr %23, align 64
  %70 = add i64 %34, 16
  %71 = add i64 %32, 4
  store <16 x float> zeroinitializer, ptr %24, align 64
  %72 = add i64 %34, 32
  %73 = add i64 %32, 4
  store <16 x float> zeroinitializer, ptr %25, align 64
  %74 = add i64 %34, 48
  %75 = add i64 %32, 4
  store <16 x float> zeroinitializer, ptr %26, align 64
  %76 = add i64 %34, 0
  %77 = add i64 %32, 5
  store <16 x float> zeroinitializer, ptr %27, align 64
  %78 = add i64 %34, 16
  %79 = add i64 %32, 5
  store <16 x float> zeroinitializer, ptr %28, align 64
  %80 = add i64 %34, 32
  %81 = add i64 %32, 5
  store <16 x float> zeroinitializer, ptr %29, align 64
  %82 = add i64 %34, 48
  %83 = add i64 %32, 5
  store <16 x float> zeroinitializer, ptr %30, align 64
  br label %join

else:                                             ; preds = %loop.body2
  %84 = add i64 %34, 0
  %85 = add i64 %32, 0
  %86 = add i64 0, %85
  %87 = mul i64 %86, 64
  %88 = add i64 %87, %84
  %89 = getelementptr inbounds float, ptr %3, i64 %88
  %90 = load <16 x float>, ptr %89, align 4
  store <16 x float> %90, ptr %7, align 64
  %91 = add i64 %34, 16
  %92 = add i64 %32, 0
  %93 = add i64 0, %92
  %94 = mul i64 %93, 64
  %95 = add i64 %94, %91
  %96 = getelementptr inbounds float, ptr %3, i64 %95
  %97 = load <16 x float>, ptr %96, align 4
  store <16 x float> %97, ptr %8, align 64
  %98 = add i64 %34, 32
  %99 = add i64 %32, 0
  %100 = add i64 0, %99
  %101 = mul i64 %100, 64
  %102 = add i64 %101, %98
  %103 = getelementptr inbounds float, ptr %3, i64 %102
  %104 = load <16 x float>, ptr %103, align 4
  store <16 x float> %104, ptr %9, align 64
  %105 = add i64 %34, 48
  %106 = add i64 %32, 0
  %107 = add i64 0, %106
  %108 = mul i64 %107, 64
  %109 = add i64 %108, %105
  %110 = getelementptr inbounds float, ptr %3, i64 %109
  %111 = load <16 x float>, ptr %110, align 4
  store <16 x float> %111, ptr %10, align 64
  %112 = add i64 %34, 0
  %113 = add i64 %32, 1
  %114 = add i64 0, %113
  %115 = mul i64 %114, 64
  %116 = add i64 %115, %112
  %117 = getelementptr inbounds float, ptr %3, i64 %116
  %118 = load <16 x float>, ptr %117, align 4
  store <16 x float> %118, ptr %11, align 64
  %119 = add i64 %34, 16
  %120 = add i64 %32, 1
  %121 = add i64 0, %120
  %122 = mul i64 %121, 64
  %123 = add i64 %122, %119
  %124 = getelementptr inbounds float, ptr %3, i64 %123
  %125 = load <16 x float>, ptr %124, align 4
  store <16 x float> %125, ptr %12, align 64
  %126 = add i64 %34, 32
  %127 = add i64 %32, 1
  %128 = add i64 0, %127
  %129 = mul i64 %128, 64
  %130 = add i64 %129, %126
  %131 = getelementptr inbounds float, ptr %3, i64 %130
  %132 = load <16 x float>, ptr %131, align 4
  store <16 x float> %132, ptr %13, align 64
  %133 = add i64 %34, 48
  %134 = add i64 %32, 1
  %135 = add i64 0, %134
  %136 = mul i64 %135, 64
  %137 = add i64 %136, %133
  %138 = getelementptr inbounds float, ptr %3, i64 %137
  %139 = load <16 x float>, ptr %138, align 4
  store <16 x float> %139, ptr %14, align 64
  %140 = add i64 %34, 0
  %141 = add i64 %32, 2
  %142 = add i64 0, %141
  %143 = mul i64 %142, 64
  %144 = add i64 %143, %140
  %145 = getelementptr inbounds float, ptr %3, i64 %144
  %146 = load <16 x float>, ptr %145, align 4
  store <16 x float> %146, ptr %15, align 64
  %147 = add i64 %34, 16
  %148 = add i64 %32, 2
  %149 = add i64 0, %148
  %150 = mul i64 %149, 64
  %151 = add i64 %150, %147
  %152 = getelementptr inbounds float, ptr %3, i64 %151
  %153 = load <16 x float>, ptr %152, align 4
  store <16 x float> %153, ptr %16, align 64
  %154 = add i64 %34, 32
  %155 = add i64 %32, 2
  %156 = add i64 0, %155
  %157 = mul i64 %156, 64
  %158 = add i64 %157, %154
  %159 = getelementptr inbounds float, ptr %3, i64 %158
  %160 = load <16 x float>, ptr %159, align 4
  store <16 x float> %160, ptr %17, align 64
  %161 = add i64 %34, 48
  %162 = add i64 %32, 2
  %163 = add i64 0, %162
  %164 = mul i64 %163, 64
  %165 = add i64 %164, %161
  %166 = getelementptr inbounds float, ptr %3, i64 %165
  %167 = load <16 x float>, ptr %166, align 4
  store <16 x float> %167, ptr %18, align 64
  %168 = add i64 %34, 0
  %169 = add i64 %32, 3
  %170 = add i64 0, %169
  %171 = mul i64 %170, 64
  %172 = add i64 %171, %168
  %173 = getelementptr inbounds float, ptr %3, i64 %172
  %174 = load <16 x float>, ptr %173, align 4
  store <16 x float> %174, ptr %19, align 64
  %175 = add i64 %34, 16
  %176 = add i64 %32, 3
  %177 = add i64 0, %176
  %178 = mul i64 %177, 64
  %179 = add i64 %178, %175
  %180 = getelementptr inbounds float, ptr %3, i64 %179
  %181 = load <16 x float>, ptr %180, align 4
  store <16 x float> %181, ptr %20, align 64
  %182 = add i64 %34, 32
  %183 = add i64 %32, 3
  %184 = add i64 0, %183
  %185 = mul i64 %184, 64
  %186 = add i64 %185, %182
  %187 = getelementptr inbounds float, ptr %3, i64 %186
  %188 = load <16 x float>, ptr %187, align 4
  store <16 x float> %188, ptr %21, align 64
  %189 = add i64 %34, 48
  %190 = add i64 %32, 3
  %191 = add i64 0, %190
  %192 = mul i64 %191, 64
  %193 = add i64 %192, %189
  %194 = getelementptr inbounds float, ptr %3, i64 %193
  %195 = load <16 x float>, ptr %194, align 4
  store <16 x float> %195, ptr %22, align 64
  %196 = add i64 %34, 0
  %197 = add i64 %32, 4
  %198 = add i64 0, %197
  %199 = mul i64 %198, 64
  %200 = add i64 %199, %196
  %201 = getelementptr inbounds float, ptr %3, i64 %200
  %202 = load <16 x float>, ptr %201, align 4
  store <16 x float> %202, ptr %23, align 64
  %203 = add i64 %34, 16
  %204 = add i64 %32, 4
  %205 = add i64 0, %204
  %206 = mul i64 %205, 64
  %207 = add i64 %206, %203
  %208 = getelementptr inbounds float, ptr %3, i64 %207
  %209 = load <16 x float>, ptr %208, align 4
  store <16 x float> %209, ptr %24, align 64
  %210 = add i64 %34, 32
  %211 = add i64 %32, 4
  %212 = add i64 0, %211
  %213 = mul i64 %212, 64
  %214 = add i64 %213, %210
  %215 = getelementptr inbounds float, ptr %3, i64 %214
  %216 = load <16 x float>, ptr %215, align 4
  store <16 x float> %216, ptr %25, align 64
  %217 = add i64 %34, 48
  %218 = add i64 %32, 4
  %219 = add i64 0, %218
  %220 = mul i64 %219, 64
  %221 = add i64 %220, %217
  %222 = getelementptr inbounds float, ptr %3, i64 %221
  %223 = load <16 x float>, ptr %222, align 4
  store <16 x float> %223, ptr %26, align 64
  %224 = add i64 %34, 0
  %225 = add i64 %32, 5
  %226 = add i64 0, %225
  %227 = mul i64 %226, 64
  %228 = add i64 %227, %224
  %229 = getelementptr inbounds float, ptr %3, i64 %228
  %230 = load <16 x float>, ptr %229, align 4
  store <16 x float> %230, ptr %27, align 64
  %231 = add i64 %34, 16
  %232 = add i64 %32, 5
  %233 = add i64 0, %232
  %234 = mul i64 %233, 64
  %235 = add i64 %234, %231
  %236 = getelementptr inbounds float, ptr %3, i64 %235
  %237 = load <16 x float>, ptr %236, align 4
  store <16 x float> %237, ptr %28, align 64
  %238 = add i64 %34, 32
  %239 = add i64 %32, 5
  %240 = add i64 0, %239
  %241 = mul i64 %240, 64
  %242 = add i64 %241, %238
  %243 = getelementptr inbounds float, ptr %3, i64 %242
  %244 = load <16 x float>, ptr %243, align 4
  store <16 x float> %244, ptr %29, align 64
  %245 = add i64 %34, 48
  %246 = add i64 %32, 5
  %247 = add i64 0, %246
  %248 = mul i64 %247, 64
  %249 = add i64 %248, %245
  %250 = getelementptr inbounds float, ptr %3, i64 %249
  %251 = load <16 x float>, ptr %250, align 4
  store <16 x float> %251, ptr %30, align 64
  br label %join

join:                                             ; preds = %else, %then
  %252 = add i64 %32, 0
  %253 = mul i64 %252, %1
  %254 = add i64 %253, 0
  %255 = getelementptr inbounds float, ptr %0, i64 %254
  %256 = call ptr asm "", "=r,0"(ptr %255)
  %257 = add i64 %32, 1
  %258 = mul i64 %257, %1
  %259 = add i64 %258, 0
  %260 = getelementptr inbounds float, ptr %0, i64 %259
  %261 = call ptr asm "", "=r,0"(ptr %260)
  %262 = add i64 %32, 2
  %263 = mul i64 %262, %1
  %264 = add i64 %263, 0
  %265 = getelementptr inbounds float, ptr %0, i64 %264
  %266 = call ptr asm "", "=r,0"(ptr %265)
  %267 = add i64 %32, 3
  %268 = mul i64 %267, %1
  %269 = add i64 %268, 0
  %270 = getelementptr inbounds float, ptr %0, i64 %269
  %271 = call ptr asm "", "=r,0"(ptr %270)
  %272 = add i64 %32, 4
  %273 = mul i64 %272, %1
  %274 = add i64 %273, 0
  %275 = getelementptr inbounds float, ptr %0, i64 %274
  %276 = call ptr asm "", "=r,0"(ptr %275)
  %277 = add i64 %32, 5
  %278 = mul i64 %277, %1
  %279 = add i64 %278, 0
  %280 = getelementptr inbounds float, ptr %0, i64 %279
  %281 = call ptr asm "", "=r,0"(ptr %280)
  br label %loop5

loop5:                                            ; preds = %loop.body6, %join
  %i8 = phi i64 [ 0, %join ], [ %367, %loop.body6 ]
  %282 = icmp slt i64 %i8, 64
  br i1 %282, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %283 = add i64 %34, 0
  %284 = add i64 0, %i8
  %285 = mul i64 %284, 64
  %286 = add i64 %285, %283
  %287 = getelementptr inbounds float, ptr %2, i64 %286
  %288 = load <16 x float>, ptr %287, align 4
  %289 = add i64 %34, 16
  %290 = add i64 0, %i8
  %291 = mul i64 %290, 64
  %292 = add i64 %291, %289
  %293 = getelementptr inbounds float, ptr %2, i64 %292
  %294 = load <16 x float>, ptr %293, align 4
  %295 = add i64 %34, 32
  %296 = add i64 0, %i8
  %297 = mul i64 %296, 64
  %298 = add i64 %297, %295
  %299 = getelementptr inbounds float, ptr %2, i64 %298
  %300 = load <16 x float>, ptr %299, align 4
  %301 = add i64 %34, 48
  %302 = add i64 0, %i8
  %303 = mul i64 %302, 64
  %304 = add i64 %303, %301
  %305 = getelementptr inbounds float, ptr %2, i64 %304
  %306 = load <16 x float>, ptr %305, align 4
  %307 = getelementptr inbounds float, ptr %256, i64 %i8
  %308 = load float, ptr %307, align 4
  %.splatinsert = insertelement <16 x float> poison, float %308, i64 0
  %.splat = shufflevector <16 x float> %.splatinsert, <16 x float> poison, <16 x i32> zeroinitializer
  %309 = load <16 x float>, ptr %7, align 64
  %310 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat, <16 x float> %288, <16 x float> %309)
  store <16 x float> %310, ptr %7, align 64
  %311 = load <16 x float>, ptr %8, align 64
  %312 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat, <16 x float> %294, <16 x float> %311)
  store <16 x float> %312, ptr %8, align 64
  %313 = load <16 x float>, ptr %9, align 64
  %314 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat, <16 x float> %300, <16 x float> %313)
  store <16 x float> %314, ptr %9, align 64
  %315 = load <16 x float>, ptr %10, align 64
  %316 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat, <16 x float> %306, <16 x float> %315)
  store <16 x float> %316, ptr %10, align 64
  %317 = getelementptr inbounds float, ptr %261, i64 %i8
  %318 = load float, ptr %317, align 4
  %.splatinsert9 = insertelement <16 x float> poison, float %318, i64 0
  %.splat10 = shufflevector <16 x float> %.splatinsert9, <16 x float> poison, <16 x i32> zeroinitializer
  %319 = load <16 x float>, ptr %11, align 64
  %320 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat10, <16 x float> %288, <16 x float> %319)
  store <16 x float> %320, ptr %11, align 64
  %321 = load <16 x float>, ptr %12, align 64
  %322 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat10, <16 x float> %294, <16 x float> %321)
  store <16 x float> %322, ptr %12, align 64
  %323 = load <16 x float>, ptr %13, align 64
  %324 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat10, <16 x float> %300, <16 x float> %323)
  store <16 x float> %324, ptr %13, align 64
  %325 = load <16 x float>, ptr %14, align 64
  %326 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat10, <16 x float> %306, <16 x float> %325)
  store <16 x float> %326, ptr %14, align 64
  %327 = getelementptr inbounds float, ptr %266, i64 %i8
  %328 = load float, ptr %327, align 4
  %.splatinsert11 = insertelement <16 x float> poison, float %328, i64 0
  %.splat12 = shufflevector <16 x float> %.splatinsert11, <16 x float> poison, <16 x i32> zeroinitializer
  %329 = load <16 x float>, ptr %15, align 64
  %330 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat12, <16 x float> %288, <16 x float> %329)
  store <16 x float> %330, ptr %15, align 64
  %331 = load <16 x float>, ptr %16, align 64
  %332 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat12, <16 x float> %294, <16 x float> %331)
  store <16 x float> %332, ptr %16, align 64
  %333 = load <16 x float>, ptr %17, align 64
  %334 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat12, <16 x float> %300, <16 x float> %333)
  store <16 x float> %334, ptr %17, align 64
  %335 = load <16 x float>, ptr %18, align 64
  %336 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat12, <16 x float> %306, <16 x float> %335)
  store <16 x float> %336, ptr %18, align 64
  %337 = getelementptr inbounds float, ptr %271, i64 %i8
  %338 = load float, ptr %337, align 4
  %.splatinsert13 = insertelement <16 x float> poison, float %338, i64 0
  %.splat14 = shufflevector <16 x float> %.splatinsert13, <16 x float> poison, <16 x i32> zeroinitializer
  %339 = load <16 x float>, ptr %19, align 64
  %340 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat14, <16 x float> %288, <16 x float> %339)
  store <16 x float> %340, ptr %19, align 64
  %341 = load <16 x float>, ptr %20, align 64
  %342 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat14, <16 x float> %294, <16 x float> %341)
  store <16 x float> %342, ptr %20, align 64
  %343 = load <16 x float>, ptr %21, align 64
  %344 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat14, <16 x float> %300, <16 x float> %343)
  store <16 x float> %344, ptr %21, align 64
  %345 = load <16 x float>, ptr %22, align 64
  %346 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat14, <16 x float> %306, <16 x float> %345)
  store <16 x float> %346, ptr %22, align 64
  %347 = getelementptr inbounds float, ptr %276, i64 %i8
  %348 = load float, ptr %347, align 4
  %.splatinsert15 = insertelement <16 x float> poison, float %348, i64 0
  %.splat16 = shufflevector <16 x float> %.splatinsert15, <16 x float> poison, <16 x i32> zeroinitializer
  %349 = load <16 x float>, ptr %23, align 64
  %350 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat16, <16 x float> %288, <16 x float> %349)
  store <16 x float> %350, ptr %23, align 64
  %351 = load <16 x float>, ptr %24, align 64
  %352 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat16, <16 x float> %294, <16 x float> %351)
  store <16 x float> %352, ptr %24, align 64
  %353 = load <16 x float>, ptr %25, align 64
  %354 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat16, <16 x float> %300, <16 x float> %353)
  store <16 x float> %354, ptr %25, align 64
  %355 = load <16 x float>, ptr %26, align 64
  %356 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat16, <16 x float> %306, <16 x float> %355)
  store <16 x float> %356, ptr %26, align 64
  %357 = getelementptr inbounds float, ptr %281, i64 %i8
  %358 = load float, ptr %357, align 4
  %.splatinsert17 = insertelement <16 x float> poison, float %358, i64 0
  %.splat18 = shufflevector <16 x float> %.splatinsert17, <16 x float> poison, <16 x i32> zeroinitializer
  %359 = load <16 x float>, ptr %27, align 64
  %360 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat18, <16 x float> %288, <16 x float> %359)
  store <16 x float> %360, ptr %27, align 64
  %361 = load <16 x float>, ptr %28, align 64
  %362 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat18, <16 x float> %294, <16 x float> %361)
  store <16 x float> %362, ptr %28, align 64
  %363 = load <16 x float>, ptr %29, align 64
  %364 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat18, <16 x float> %300, <16 x float> %363)
  store <16 x float> %364, ptr %29, align 64
  %365 = load <16 x float>, ptr %30, align 64
  %366 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat18, <16 x float> %306, <16 x float> %365)
  store <16 x float> %366, ptr %30, align 64
  %367 = add nuw nsw i64 %i8, 1
  br label %loop5, !llvm.loop !3

loop.exit7:                                       ; preds = %loop5
  %368 = add i64 %34, 0
  %369 = add i64 %32, 0
  %370 = mul i64 %369, %5
  %371 = add i64 0, %370
  %372 = mul i64 %368, 1
  %373 = add i64 %371, %372
  %374 = getelementptr inbounds float, ptr %4, i64 %373
  %375 = load <16 x float>, ptr %7, align 64
  store <16 x float> %375, ptr %374, align 4
  %376 = add i64 %34, 16
  %377 = add i64 %32, 0
  %378 = mul i64 %377, %5
  %379 = add i64 0, %378
  %380 = mul i64 %376, 1
  %381 = add i64 %379, %380
  %382 = getelementptr inbounds float, ptr %4, i64 %381
  %383 = load <16 x float>, ptr %8, align 64
  store <16 x float> %383, ptr %382, align 4
  %384 = add i64 %34, 32
  %385 = add i64 %32, 0
  %386 = mul i64 %385, %5
  %387 = add i64 0, %386
  %388 = mul i64 %384, 1
  %389 = add i64 %387, %388
  %390 = getelementptr inbounds float, ptr %4, i64 %389
  %391 = load <16 x float>, ptr %9, align 64
  store <16 x float> %391, ptr %390, align 4
  %392 = add i64 %34, 48
  %393 = add i64 %32, 0
  %394 = mul i64 %393, %5
  %395 = add i64 0, %394
  %396 = mul i64 %392, 1
  %397 = add i64 %395, %396
  %398 = getelementptr inbounds float, ptr %4, i64 %397
  %399 = load <16 x float>, ptr %10, align 64
  store <16 x float> %399, ptr %398, align 4
  %400 = add i64 %34, 0
  %401 = add i64 %32, 1
  %402 = mul i64 %401, %5
  %403 = add i64 0, %402
  %404 = mul i64 %400, 1
  %405 = add i64 %403, %404
  %406 = getelementptr inbounds float, ptr %4, i64 %405
  %407 = load <16 x float>, ptr %11, align 64
  store <16 x float> %407, ptr %406, align 4
  %408 = add i64 %34, 16
  %409 = add i64 %32, 1
  %410 = mul i64 %409, %5
  %411 = add i64 0, %410
  %412 = mul i64 %408, 1
  %413 = add i64 %411, %412
  %414 = getelementptr inbounds float, ptr %4, i64 %413
  %415 = load <16 x float>, ptr %12, align 64
  store <16 x float> %415, ptr %414, align 4
  %416 = add i64 %34, 32
  %417 = add i64 %32, 1
  %418 = mul i64 %417, %5
  %419 = add i64 0, %418
  %420 = mul i64 %416, 1
  %421 = add i64 %419, %420
  %422 = getelementptr inbounds float, ptr %4, i64 %421
  %423 = load <16 x float>, ptr %13, align 64
  store <16 x float> %423, ptr %422, align 4
  %424 = add i64 %34, 48
  %425 = add i64 %32, 1
  %426 = mul i64 %425, %5
  %427 = add i64 0, %426
  %428 = mul i64 %424, 1
  %429 = add i64 %427, %428
  %430 = getelementptr inbounds float, ptr %4, i64 %429
  %431 = load <16 x float>, ptr %14, align 64
  store <16 x float> %431, ptr %430, align 4
  %432 = add i64 %34, 0
  %433 = add i64 %32, 2
  %434 = mul i64 %433, %5
  %435 = add i64 0, %434
  %436 = mul i64 %432, 1
  %437 = add i64 %435, %436
  %438 = getelementptr inbounds float, ptr %4, i64 %437
  %439 = load <16 x float>, ptr %15, align 64
  store <16 x float> %439, ptr %438, align 4
  %440 = add i64 %34, 16
  %441 = add i64 %32, 2
  %442 = mul i64 %441, %5
  %443 = add i64 0, %442
  %444 = mul i64 %440, 1
  %445 = add i64 %443, %444
  %446 = getelementptr inbounds float, ptr %4, i64 %445
  %447 = load <16 x float>, ptr %16, align 64
  store <16 x float> %447, ptr %446, align 4
  %448 = add i64 %34, 32
  %449 = add i64 %32, 2
  %450 = mul i64 %449, %5
  %451 = add i64 0, %450
  %452 = mul i64 %448, 1
  %453 = add i64 %451, %452
  %454 = getelementptr inbounds float, ptr %4, i64 %453
  %455 = load <16 x float>, ptr %17, align 64
  store <16 x float> %455, ptr %454, align 4
  %456 = add i64 %34, 48
  %457 = add i64 %32, 2
  %458 = mul i64 %457, %5
  %459 = add i64 0, %458
  %460 = mul i64 %456, 1
  %461 = add i64 %459, %460
  %462 = getelementptr inbounds float, ptr %4, i64 %461
  %463 = load <16 x float>, ptr %18, align 64
  store <16 x float> %463, ptr %462, align 4
  %464 = add i64 %34, 0
  %465 = add i64 %32, 3
  %466 = mul i64 %465, %5
  %467 = add i64 0, %466
  %468 = mul i64 %464, 1
  %469 = add i64 %467, %468
  %470 = getelementptr inbounds float, ptr %4, i64 %469
  %471 = load <16 x float>, ptr %19, align 64
  store <16 x float> %471, ptr %470, align 4
  %472 = add i64 %34, 16
  %473 = add i64 %32, 3
  %474 = mul i64 %473, %5
  %475 = add i64 0, %474
  %476 = mul i64 %472, 1
  %477 = add i64 %475, %476
  %478 = getelementptr inbounds float, ptr %4, i64 %477
  %479 = load <16 x float>, ptr %20, align 64
  store <16 x float> %479, ptr %478, align 4
  %480 = add i64 %34, 32
  %481 = add i64 %32, 3
  %482 = mul i64 %481, %5
  %483 = add i64 0, %482
  %484 = mul i64 %480, 1
  %485 = add i64 %483, %484
  %486 = getelementptr inbounds float, ptr %4, i64 %485
  %487 = load <16 x float>, ptr %21, align 64
  store <16 x float> %487, ptr %486, align 4
  %488 = add i64 %34, 48
  %489 = add i64 %32, 3
  %490 = mul i64 %489, %5
  %491 = add i64 0, %490
  %492 = mul i64 %488, 1
  %493 = add i64 %491, %492
  %494 = getelementptr inbounds float, ptr %4, i64 %493
  %495 = load <16 x float>, ptr %22, align 64
  store <16 x float> %495, ptr %494, align 4
  %496 = add i64 %34, 0
  %497 = add i64 %32, 4
  %498 = mul i64 %497, %5
  %499 = add i64 0, %498
  %500 = mul i64 %496, 1
  %501 = add i64 %499, %500
  %502 = getelementptr inbounds float, ptr %4, i64 %501
  %503 = load <16 x float>, ptr %23, align 64
  store <16 x float> %503, ptr %502, align 4
  %504 = add i64 %34, 16
  %505 = add i64 %32, 4
  %506 = mul i64 %505, %5
  %507 = add i64 0, %506
  %508 = mul i64 %504, 1
  %509 = add i64 %507, %508
  %510 = getelementptr inbounds float, ptr %4, i64 %509
  %511 = load <16 x float>, ptr %24, align 64
  store <16 x float> %511, ptr %510, align 4
  %512 = add i64 %34, 32
  %513 = add i64 %32, 4
  %514 = mul i64 %513, %5
  %515 = add i64 0, %514
  %516 = mul i64 %512, 1
  %517 = add i64 %515, %516
  %518 = getelementptr inbounds float, ptr %4, i64 %517
  %519 = load <16 x float>, ptr %25, align 64
  store <16 x float> %519, ptr %518, align 4
  %520 = add i64 %34, 48
  %521 = add i64 %32, 4
  %522 = mul i64 %521, %5
  %523 = add i64 0, %522
  %524 = mul i64 %520, 1
  %525 = add i64 %523, %524
  %526 = getelementptr inbounds float, ptr %4, i64 %525
  %527 = load <16 x float>, ptr %26, align 64
  store <16 x float> %527, ptr %526, align 4
  %528 = add i64 %34, 0
  %529 = add i64 %32, 5
  %530 = mul i64 %529, %5
  %531 = add i64 0, %530
  %532 = mul i64 %528, 1
  %533 = add i64 %531, %532
  %534 = getelementptr inbounds float, ptr %4, i64 %533
  %535 = load <16 x float>, ptr %27, align 64
  store <16 x float> %535, ptr %534, align 4
  %536 = add i64 %34, 16
  %537 = add i64 %32, 5
  %538 = mul i64 %537, %5
  %539 = add i64 0, %538
  %540 = mul i64 %536, 1
  %541 = add i64 %539, %540
  %542 = getelementptr inbounds float, ptr %4, i64 %541
  %543 = load <16 x float>, ptr %28, align 64
  store <16 x float> %543, ptr %542, align 4
  %544 = add i64 %34, 32
  %545 = add i64 %32, 5
  %546 = mul i64 %545, %5
  %547 = add i64 0, %546
  %548 = mul i64 %544, 1
  %549 = add i64 %547, %548
  %550 = getelementptr inbounds float, ptr %4, i64 %549
  %551 = load <16 x float>, ptr %29, align 64
  store <16 x float> %551, ptr %550, align 4
  %552 = add i64 %34, 48
  %553 = add i64 %32, 5
  %554 = mul i64 %553, %5
  %555 = add i64 0, %554
  %556 = mul i64 %552, 1
  %557 = add i64 %555, %556
  %558 = getelementptr inbounds float, ptr %4, i64 %557
  %559 = load <16 x float>, ptr %30, align 64
  store <16 x float> %559, ptr %558, align 4
  %560 = add nuw nsw i64 %i4, 1
  br label %loop1

loop19:                                           ; preds = %loop.exit28, %loop.exit
  %i22 = phi i64 [ 0, %loop.exit ], [ %713, %loop.exit28 ]
  %561 = icmp slt i64 %i22, 1
  br i1 %561, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  %562 = mul i64 %i22, 64
  br i1 %6, label %then23, label %else24

loop.exit21:                                      ; preds = %loop19
  ret void

then23:                                           ; preds = %loop.body20
  %563 = add i64 %562, 0
  store <16 x float> zeroinitializer, ptr %7, align 64
  %564 = add i64 %562, 16
  store <16 x float> zeroinitializer, ptr %8, align 64
  %565 = add i64 %562, 32
  store <16 x float> zeroinitializer, ptr %9, align 64
  %566 = add i64 %562, 48
  store <16 x float> zeroinitializer, ptr %10, align 64
  %567 = add i64 %562, 0
  store <16 x float> zeroinitializer, ptr %11, align 64
  %568 = add i64 %562, 16
  store <16 x float> zeroinitializer, ptr %12, align 64
  %569 = add i64 %562, 32
  store <16 x float> zeroinitializer, ptr %13, align 64
  %570 = add i64 %562, 48
  store <16 x float> zeroinitializer, ptr %14, align 64
  br label %join25

else24:                                           ; preds = %loop.body20
  %571 = add i64 %562, 0
  %572 = add i64 8064, %571
  %573 = getelementptr inbounds float, ptr %3, i64 %572
  %574 = load <16 x float>, ptr %573, align 4
  store <16 x float> %574, ptr %7, align 64
  %575 = add i64 %562, 16
  %576 = add i64 8064, %575
  %577 = getelementptr inbounds float, ptr %3, i64 %576
  %578 = load <16 x float>, ptr %577, align 4
  store <16 x float> %578, ptr %8, align 64
  %579 = add i64 %562, 32
  %580 = add i64 8064, %579
  %581 = getelementptr inbounds float, ptr %3, i64 %580
  %582 = load <16 x float>, ptr %581, align 4
  store <16 x float> %582, ptr %9, align 64
  %583 = add i64 %562, 48
  %584 = add i64 8064, %583
  %585 = getelementptr inbounds float, ptr %3, i64 %584
  %586 = load <16 x float>, ptr %585, align 4
  store <16 x float> %586, ptr %10, align 64
  %587 = add i64 %562, 0
  %588 = add i64 8128, %587
  %589 = getelementptr inbounds float, ptr %3, i64 %588
  %590 = load <16 x float>, ptr %589, align 4
  store <16 x float> %590, ptr %11, align 64
  %591 = add i64 %562, 16
  %592 = add i64 8128, %591
  %593 = getelementptr inbounds float, ptr %3, i64 %592
  %594 = load <16 x float>, ptr %593, align 4
  store <16 x float> %594, ptr %12, align 64
  %595 = add i64 %562, 32
  %596 = add i64 8128, %595
  %597 = getelementptr inbounds float, ptr %3, i64 %596
  %598 = load <16 x float>, ptr %597, align 4
  store <16 x float> %598, ptr %13, align 64
  %599 = add i64 %562, 48
  %600 = add i64 8128, %599
  %601 = getelementptr inbounds float, ptr %3, i64 %600
  %602 = load <16 x float>, ptr %601, align 4
  store <16 x float> %602, ptr %14, align 64
  br label %join25

join25:                                           ; preds = %else24, %then23
  %603 = mul i64 126, %1
  %604 = add i64 %603, 0
  %605 = getelementptr inbounds float, ptr %0, i64 %604
  %606 = call ptr asm "", "=r,0"(ptr %605)
  %607 = mul i64 127, %1
  %608 = add i64 %607, 0
  %609 = getelementptr inbounds float, ptr %0, i64 %608
  %610 = call ptr asm "", "=r,0"(ptr %609)
  br label %loop26

loop26:                                           ; preds = %loop.body27, %join25
  %i29 = phi i64 [ 0, %join25 ], [ %656, %loop.body27 ]
  %611 = icmp slt i64 %i29, 64
  br i1 %611, label %loop.body27, label %loop.exit28

loop.body27:                                      ; preds = %loop26
  %612 = add i64 %562, 0
  %613 = add i64 0, %i29
  %614 = mul i64 %613, 64
  %615 = add i64 %614, %612
  %616 = getelementptr inbounds float, ptr %2, i64 %615
  %617 = load <16 x float>, ptr %616, align 4
  %618 = add i64 %562, 16
  %619 = add i64 0, %i29
  %620 = mul i64 %619, 64
  %621 = add i64 %620, %618
  %622 = getelementptr inbounds float, ptr %2, i64 %621
  %623 = load <16 x float>, ptr %622, align 4
  %624 = add i64 %562, 32
  %625 = add i64 0, %i29
  %626 = mul i64 %625, 64
  %627 = add i64 %626, %624
  %628 = getelementptr inbounds float, ptr %2, i64 %627
  %629 = load <16 x float>, ptr %628, align 4
  %630 = add i64 %562, 48
  %631 = add i64 0, %i29
  %632 = mul i64 %631, 64
  %633 = add i64 %632, %630
  %634 = getelementptr inbounds float, ptr %2, i64 %633
  %635 = load <16 x float>, ptr %634, align 4
  %636 = getelementptr inbounds float, ptr %606, i64 %i29
  %637 = load float, ptr %636, align 4
  %.splatinsert30 = insertelement <16 x float> poison, float %637, i64 0
  %.splat31 = shufflevector <16 x float> %.splatinsert30, <16 x float> poison, <16 x i32> zeroinitializer
  %638 = load <16 x float>, ptr %7, align 64
  %639 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat31, <16 x float> %617, <16 x float> %638)
  store <16 x float> %639, ptr %7, align 64
  %640 = load <16 x float>, ptr %8, align 64
  %641 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat31, <16 x float> %623, <16 x float> %640)
  store <16 x float> %641, ptr %8, align 64
  %642 = load <16 x float>, ptr %9, align 64
  %643 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat31, <16 x float> %629, <16 x float> %642)
  store <16 x float> %643, ptr %9, align 64
  %644 = load <16 x float>, ptr %10, align 64
  %645 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat31, <16 x float> %635, <16 x float> %644)
  store <16 x float> %645, ptr %10, align 64
  %646 = getelementptr inbounds float, ptr %610, i64 %i29
  %647 = load float, ptr %646, align 4
  %.splatinsert32 = insertelement <16 x float> poison, float %647, i64 0
  %.splat33 = shufflevector <16 x float> %.splatinsert32, <16 x float> poison, <16 x i32> zeroinitializer
  %648 = load <16 x float>, ptr %11, align 64
  %649 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat33, <16 x float> %617, <16 x float> %648)
  store <16 x float> %649, ptr %11, align 64
  %650 = load <16 x float>, ptr %12, align 64
  %651 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat33, <16 x float> %623, <16 x float> %650)
  store <16 x float> %651, ptr %12, align 64
  %652 = load <16 x float>, ptr %13, align 64
  %653 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat33, <16 x float> %629, <16 x float> %652)
  store <16 x float> %653, ptr %13, align 64
  %654 = load <16 x float>, ptr %14, align 64
  %655 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat33, <16 x float> %635, <16 x float> %654)
  store <16 x float> %655, ptr %14, align 64
  %656 = add nuw nsw i64 %i29, 1
  br label %loop26, !llvm.loop !5

loop.exit28:                                      ; preds = %loop26
  %657 = add i64 %562, 0
  %658 = mul i64 126, %5
  %659 = add i64 0, %658
  %660 = mul i64 %657, 1
  %661 = add i64 %659, %660
  %662 = getelementptr inbounds float, ptr %4, i64 %661
  %663 = load <16 x float>, ptr %7, align 64
  store <16 x float> %663, ptr %662, align 4
  %664 = add i64 %562, 16
  %665 = mul i64 126, %5
  %666 = add i64 0, %665
  %667 = mul i64 %664, 1
  %668 = add i64 %666, %667
  %669 = getelementptr inbounds float, ptr %4, i64 %668
  %670 = load <16 x float>, ptr %8, align 64
  store <16 x float> %670, ptr %669, align 4
  %671 = add i64 %562, 32
  %672 = mul i64 126, %5
  %673 = add i64 0, %672
  %674 = mul i64 %671, 1
  %675 = add i64 %673, %674
  %676 = getelementptr inbounds float, ptr %4, i64 %675
  %677 = load <16 x float>, ptr %9, align 64
  store <16 x float> %677, ptr %676, align 4
  %678 = add i64 %562, 48
  %679 = mul i64 126, %5
  %680 = add i64 0, %679
  %681 = mul i64 %678, 1
  %682 = add i64 %680, %681
  %683 = getelementptr inbounds float, ptr %4, i64 %682
  %684 = load <16 x float>, ptr %10, align 64
  store <16 x float> %684, ptr %683, align 4
  %685 = add i64 %562, 0
  %686 = mul i64 127, %5
  %687 = add i64 0, %686
  %688 = mul i64 %685, 1
  %689 = add i64 %687, %688
  %690 = getelementptr inbounds float, ptr %4, i64 %689
  %691 = load <16 x float>, ptr %11, align 64
  store <16 x float> %691, ptr %690, align 4
  %692 = add i64 %562, 16
  %693 = mul i64 127, %5
  %694 = add i64 0, %693
  %695 = mul i64 %692, 1
  %696 = add i64 %694, %695
  %697 = getelementptr inbounds float, ptr %4, i64 %696
  %698 = load <16 x float>, ptr %12, align 64
  store <16 x float> %698, ptr %697, align 4
  %699 = add i64 %562, 32
  %700 = mul i64 127, %5
  %701 = add i64 0, %700
  %702 = mul i64 %699, 1
  %703 = add i64 %701, %702
  %704 = getelementptr inbounds float, ptr %4, i64 %703
  %705 = load <16 x float>, ptr %13, align 64
  store <16 x float> %705, ptr %704, align 4
  %706 = add i64 %562, 48
  %707 = mul i64 127, %5
  %708 = add i64 0, %707
  %709 = mul i64 %706, 1
  %710 = add i64 %708, %709
  %711 = getelementptr inbounds float, ptr %4, i64 %710
  %712 = load <16 x float>, ptr %14, align 64
  store <16 x float> %712, ptr %711, align 4
  %713 = add nuw nsw i64 %i22, 1
  br label %loop19
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare <16 x float> @llvm.fmuladd.v16f32(<16 x float>, <16 x float>, <16 x float>) #1

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: write)
declare void @llvm.memset.p0.i64(ptr nocapture writeonly, i8, i64, i1 immarg) #3

attributes #0 = { nounwind "min-legal-vector-width"="512" "prefer-vector-width"="512" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { noinline nounwind "min-legal-vector-width"="512" "prefer-vector-width"="512" }
attributes #3 = { nocallback nofree nounwind willreturn memory(argmem: write) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
!2 = distinct !{!2, !1}
!3 = distinct !{!3, !4}
!4 = !{!"llvm.loop.unroll.count", i32 2}
!5 = distinct !{!5, !4}
