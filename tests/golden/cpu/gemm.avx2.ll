; ModuleID = 'tilejit.gemm'
source_filename = "tilejit.gemm"

@block_shape = private constant [2 x i64] [i64 64, i64 64]
@block_shape.1 = private constant [2 x i64] [i64 128, i64 64]

; Function Attrs: nounwind
define void @tj_kernel(ptr %0, i64 %1, i64 %2) #0 {
entry:
  %3 = alloca float, i64 8192, align 64
  %block_firsts = alloca [4 x i64], align 8
  %4 = alloca float, i64 4096, align 64
  %5 = alloca ptr, align 8
  %6 = alloca i1, align 1
  %7 = alloca i1, align 1
  %8 = alloca i8, i64 16384, align 64
  %9 = alloca float, i64 8192, align 64
  %10 = alloca float, i64 8192, align 64
  %11 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %11, align 8
  %12 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %13 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 0
  %data = load ptr, ptr %13, align 8
  %14 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 1, i32 0
  %15 = load i64, ptr %14, align 4
  %16 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 2, i32 0
  %17 = load i64, ptr %16, align 4
  %18 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 1, i32 1
  %19 = load i64, ptr %18, align 4
  %20 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 2, i32 1
  %21 = load i64, ptr %20, align 4
  %22 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %23 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 0
  %data1 = load ptr, ptr %23, align 8
  %24 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 1, i32 0
  %25 = load i64, ptr %24, align 4
  %26 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 2, i32 0
  %27 = load i64, ptr %26, align 4
  %28 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 1, i32 1
  %29 = load i64, ptr %28, align 4
  %30 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 2, i32 1
  %31 = load i64, ptr %30, align 4
  %32 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 2
  %33 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 0
  %data2 = load ptr, ptr %33, align 8
  %34 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 1, i32 0
  %35 = load i64, ptr %34, align 4
  %36 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 2, i32 0
  %37 = load i64, ptr %36, align 4
  %38 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 1, i32 1
  %39 = load i64, ptr %38, align 4
  %40 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 2, i32 1
  %41 = load i64, ptr %40, align 4
  %42 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %43 = load i64, ptr %42, align 4
  %44 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 1
  %45 = load i64, ptr %44, align 4
  %program_id = alloca [3 x i64], align 8
  %46 = srem i64 %25, 64
  %47 = icmp ne i64 %46, 0
  %48 = zext i1 %47 to i64
  %49 = sdiv i64 %25, 64
  %50 = add i64 %49, %48
  %51 = mul i64 1, %50
  %52 = sitofp i64 %50 to double
  %53 = fmul double 1.638800e+04, %52
  %54 = srem i64 %29, 64
  %55 = icmp ne i64 %54, 0
  %56 = zext i1 %55 to i64
  %57 = sdiv i64 %29, 64
  %58 = add i64 %57, %56
  %59 = mul i64 %51, %58
  %60 = sitofp i64 %58 to double
  %61 = fmul double %53, %60
  %62 = mul i64 1, %43
  %63 = fcmp ole double %61, 0x41C0000000000000
  %64 = icmp sgt i64 %62, 1
  %65 = and i1 %64, %63
  %66 = select i1 %65, i64 %59, i64 0
  %67 = mul i64 %66, 4
  %68 = add i64 0, %67
  %69 = mul i64 %66, 16384
  %70 = add i64 0, %69
  %71 = add i64 %68, 63
  %72 = and i64 %71, -64
  %73 = add i64 %72, %70
  %74 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 8
  %workspace_fn = load ptr, ptr %74, align 8
  %75 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 9
  %76 = load ptr, ptr %75, align 8
  %77 = icmp sgt i64 %73, 0
  %78 = icmp ne ptr %workspace_fn, null
  %79 = and i1 %78, %77
  br i1 %79, label %then, label %join

then:                                             ; preds = %entry
  %80 = call ptr %workspace_fn(ptr %76, i64 %73, i64 %68)
  br label %join

join:                                             ; preds = %then, %entry
  %81 = phi ptr [ %80, %then ], [ null, %entry ]
  %82 = getelementptr i8, ptr %81, i64 0
  %83 = add i64 %72, 0
  %84 = getelementptr i8, ptr %81, i64 %83
  %85 = icmp sgt i64 %66, 0
  %86 = icmp ne ptr %81, null
  %87 = and i1 %86, %85
  %88 = sub i64 %2, %1
  %89 = call i64 @llvm.smax.i64(i64 %88, i64 1)
  %90 = sdiv i64 %1, %89
  %91 = and i64 %90, 1
  %92 = sdiv i64 %88, 2
  %93 = mul i64 %91, %92
  br label %loop

loop:                                             ; preds = %join38, %join
  %i = phi i64 [ 0, %join ], [ %247, %join38 ]
  %94 = icmp slt i64 %i, %88
  br i1 %94, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %95 = add i64 %i, %93
  %96 = sub i64 %95, %88
  %97 = icmp sge i64 %95, %88
  %98 = select i1 %97, i64 %96, i64 %95
  %99 = add i64 %1, %98
  %100 = srem i64 %99, %45
  %101 = sdiv i64 %99, %45
  %102 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %101, ptr %102, align 4
  %103 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 %100, ptr %103, align 4
  %104 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %104, align 4
  %105 = add i64 %19, 63
  br i1 false, label %then3, label %join4

loop.exit:                                        ; preds = %loop
  ret void

then3:                                            ; preds = %loop.body
  %106 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 4
  %107 = load ptr, ptr %106, align 8
  %108 = icmp ne ptr %107, null
  br i1 %108, label %then5, label %join6

join4:                                            ; preds = %join6, %loop.body
  %109 = sdiv i64 %105, 64
  %110 = sub i64 0, %105
  %111 = select i1 false, i64 0, i64 %110
  %112 = select i1 false, i64 %111, i64 %109
  %113 = mul i64 %100, 64
  %114 = mul i64 %101, 128
  %115 = icmp eq i64 %41, 1
  %116 = add i64 %114, 128
  %117 = icmp sle i64 %116, %35
  %118 = icmp sge i64 %114, 0
  %119 = and i1 %118, %117
  %120 = and i1 %115, %119
  %121 = add i64 %113, 64
  %122 = icmp sle i64 %121, %39
  %123 = icmp sge i64 %113, 0
  %124 = and i1 %123, %122
  %125 = and i1 %120, %124
  %126 = mul i64 %114, %37
  %127 = add i64 0, %126
  %128 = mul i64 %113, %41
  %129 = add i64 %127, %128
  %130 = getelementptr float, ptr %data2, i64 %129
  %131 = select i1 %125, ptr %130, ptr %9
  %132 = select i1 %125, i64 %37, i64 64
  br label %loop7

then5:                                            ; preds = %then3
  %133 = getelementptr inbounds { i32, i64, i32, i64, i64 }, ptr %107, i32 0, i32 0
  %134 = atomicrmw or ptr %133, i32 1 monotonic, align 4
  br label %join6

join6:                                            ; preds = %then5, %then3
  br label %join4

loop7:                                            ; preds = %join30, %join4
  %i10 = phi i64 [ 0, %join4 ], [ %235, %join30 ]
  %135 = icmp slt i64 %i10, %112
  br i1 %135, label %loop.body8, label %loop.exit9

loop.body8:                                       ; preds = %loop7
  %136 = icmp eq i64 %i10, 0
  %137 = add i64 %i10, 1
  %138 = icmp eq i64 %137, %112
  %139 = mul i64 %i10, 64
  %140 = icmp slt i64 %139, %25
  %141 = icmp sge i64 %139, 0
  %142 = and i1 %141, %140
  %143 = srem i64 %139, 64
  %144 = icmp eq i64 %143, 0
  %145 = and i1 %142, %144
  %146 = and i1 %87, %145
  %147 = sdiv i64 %139, 64
  %148 = mul i64 0, %50
  %149 = add i64 %148, %147
  %150 = icmp slt i64 %113, %29
  %151 = icmp sge i64 %113, 0
  %152 = and i1 %151, %150
  %153 = srem i64 %113, 64
  %154 = icmp eq i64 %153, 0
  %155 = and i1 %152, %154
  %156 = and i1 %146, %155
  %157 = sdiv i64 %113, 64
  %158 = mul i64 %149, %58
  %159 = add i64 %158, %157
  %160 = select i1 %156, i64 %159, i64 0
  %161 = getelementptr i32, ptr %82, i64 %160
  %162 = mul i64 %160, 16384
  %163 = getelementptr i8, ptr %84, i64 %162
  store ptr %8, ptr %5, align 8
  store i1 true, ptr %6, align 1
  store i1 false, ptr %7, align 1
  br i1 %156, label %then11, label %join12

loop.exit9:                                       ; preds = %loop7
  %164 = icmp sge i64 0, %112
  br i1 %164, label %then31, label %join32

then11:                                           ; preds = %loop.body8
  %165 = load atomic i32, ptr %161 acquire, align 4
  %166 = icmp eq i32 %165, 2
  br i1 %166, label %then13, label %else

join12:                                           ; preds = %join14, %loop.body8
  %167 = load ptr, ptr %5, align 8
  %168 = load i1, ptr %6, align 1
  br i1 %168, label %then15, label %join16

then13:                                           ; preds = %then11
  store ptr %163, ptr %5, align 8
  store i1 false, ptr %6, align 1
  br label %join14

else:                                             ; preds = %then11
  %169 = cmpxchg ptr %161, i32 0, i32 1 monotonic monotonic, align 4
  %170 = extractvalue { i32, i1 } %169, 1
  store i1 %170, ptr %7, align 1
  %171 = select i1 %170, ptr %163, ptr %8
  store ptr %171, ptr %5, align 8
  br label %join14

join14:                                           ; preds = %else, %then13
  br label %join12

then15:                                           ; preds = %join12
  %172 = icmp eq i64 %31, 1
  %173 = add i64 %139, 64
  %174 = icmp sle i64 %173, %25
  %175 = icmp sge i64 %139, 0
  %176 = and i1 %175, %174
  %177 = and i1 %172, %176
  %178 = add i64 %113, 64
  %179 = icmp sle i64 %178, %29
  %180 = icmp sge i64 %113, 0
  %181 = and i1 %180, %179
  %182 = and i1 %177, %181
  %183 = xor i1 %182, true
  br i1 %183, label %then17, label %join18

join16:                                           ; preds = %join28, %join12
  %184 = icmp eq i64 %21, 1
  %185 = add i64 %114, 128
  %186 = icmp sle i64 %185, %15
  %187 = icmp sge i64 %114, 0
  %188 = and i1 %187, %186
  %189 = and i1 %184, %188
  %190 = add i64 %139, 64
  %191 = icmp sle i64 %190, %19
  %192 = icmp sge i64 %139, 0
  %193 = and i1 %192, %191
  %194 = and i1 %189, %193
  %195 = xor i1 %194, true
  br i1 %195, label %then29, label %join30

then17:                                           ; preds = %then15
  %196 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %139, ptr %196, align 4
  %197 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %113, ptr %197, align 4
  %198 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %199 = load ptr, ptr %198, align 8
  call void %199(ptr %22, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %4)
  br label %join18

join18:                                           ; preds = %then17, %then15
  %200 = mul i64 %139, %27
  %201 = add i64 0, %200
  %202 = mul i64 %113, %31
  %203 = add i64 %201, %202
  %204 = getelementptr float, ptr %data1, i64 %203
  %205 = select i1 %182, ptr %204, ptr %4
  %206 = select i1 %182, i64 %27, i64 64
  br label %loop19

loop19:                                           ; preds = %loop.exit25, %join18
  %i22 = phi i64 [ 0, %join18 ], [ %221, %loop.exit25 ]
  %207 = icmp slt i64 %i22, 64
  br i1 %207, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  br label %loop23

loop.exit21:                                      ; preds = %loop19
  %208 = load i1, ptr %7, align 1
  br i1 %208, label %then27, label %join28

loop23:                                           ; preds = %loop.body24, %loop.body20
  %i26 = phi i64 [ 0, %loop.body20 ], [ %220, %loop.body24 ]
  %209 = icmp slt i64 %i26, 64
  br i1 %209, label %loop.body24, label %loop.exit25

loop.body24:                                      ; preds = %loop23
  %210 = mul i64 %i22, %206
  %211 = add i64 0, %210
  %212 = mul i64 %i26, 1
  %213 = add i64 %211, %212
  %214 = getelementptr inbounds float, ptr %205, i64 %213
  %215 = load float, ptr %214, align 4
  %216 = add i64 0, %i22
  %217 = mul i64 %216, 64
  %218 = add i64 %217, %i26
  %219 = getelementptr inbounds float, ptr %167, i64 %218
  store float %215, ptr %219, align 4
  %220 = add nuw nsw i64 %i26, 1
  br label %loop23, !llvm.loop !0

loop.exit25:                                      ; preds = %loop23
  %221 = add nuw nsw i64 %i22, 1
  br label %loop19

then27:                                           ; preds = %loop.exit21
  store atomic i32 2, ptr %161 release, align 4
  br label %join28

join28:                                           ; preds = %then27, %loop.exit21
  br label %join16

then29:                                           ; preds = %join16
  %222 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %114, ptr %222, align 4
  %223 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %139, ptr %223, align 4
  %224 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %225 = load ptr, ptr %224, align 8
  call void %225(ptr %12, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, i64 0, ptr %3)
  br label %join30

join30:                                           ; preds = %then29, %join16
  %226 = mul i64 %114, %17
  %227 = add i64 0, %226
  %228 = mul i64 %139, %21
  %229 = add i64 %227, %228
  %230 = getelementptr float, ptr %data, i64 %229
  %231 = select i1 %194, ptr %230, ptr %3
  %232 = select i1 %194, i64 %17, i64 64
  %233 = select i1 %138, ptr %131, ptr %10
  %234 = select i1 %138, i64 %132, i64 64
  call void @tj_dot_0(ptr %231, i64 %232, ptr %167, ptr %10, ptr %233, i64 %234, i1 %136)
  %235 = add nuw nsw i64 %i10, 1
  br label %loop7

then31:                                           ; preds = %loop.exit9
  br label %loop33

join32:                                           ; preds = %loop.exit35, %loop.exit9
  %236 = xor i1 %125, true
  br i1 %236, label %then37, label %join38

loop33:                                           ; preds = %loop.body34, %then31
  %i36 = phi i64 [ 0, %then31 ], [ %242, %loop.body34 ]
  %237 = icmp slt i64 %i36, 128
  br i1 %237, label %loop.body34, label %loop.exit35

loop.body34:                                      ; preds = %loop33
  %238 = mul i64 %i36, %132
  %239 = add i64 0, %238
  %240 = add i64 %239, 0
  %241 = getelementptr inbounds float, ptr %131, i64 %240
  call void @llvm.memset.p0.i64(ptr align 4 %241, i8 0, i64 256, i1 false)
  %242 = add nuw nsw i64 %i36, 1
  br label %loop33

loop.exit35:                                      ; preds = %loop33
  br label %join32

then37:                                           ; preds = %join32
  %243 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %114, ptr %243, align 4
  %244 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %113, ptr %244, align 4
  %245 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %246 = load ptr, ptr %245, align 8
  call void %246(ptr %32, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, ptr %9)
  br label %join38

join38:                                           ; preds = %then37, %join32
  %247 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smax.i64(i64, i64) #1

; Function Attrs: noinline nounwind
define internal void @tj_dot_0(ptr %0, i64 %1, ptr noalias %2, ptr %3, ptr %4, i64 %5, i1 %6) #2 {
entry:
  %7 = alloca <8 x float>, align 32
  %8 = alloca <8 x float>, align 32
  %9 = alloca <8 x float>, align 32
  %10 = alloca <8 x float>, align 32
  %11 = alloca <8 x float>, align 32
  %12 = alloca <8 x float>, align 32
  %13 = alloca <8 x float>, align 32
  %14 = alloca <8 x float>, align 32
  %15 = alloca <8 x float>, align 32
  %16 = alloca <8 x float>, align 32
  %17 = alloca <8 x float>, align 32
  %18 = alloca <8 x float>, align 32
  br label %loop

loop:                                             ; preds = %loop.exit3, %entry
  %i = phi i64 [ 0, %entry ], [ %23, %loop.exit3 ]
  %19 = icmp slt i64 %i, 21
  br i1 %19, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %20 = mul i64 %i, 6
  br label %loop1

loop.exit:                                        ; preds = %loop
  br label %loop19

loop1:                                            ; preds = %loop.exit7, %loop.body
  %i4 = phi i64 [ 0, %loop.body ], [ %308, %loop.exit7 ]
  %21 = icmp slt i64 %i4, 4
  br i1 %21, label %loop.body2, label %loop.exit3

loop.body2:                                       ; preds = %loop1
  %22 = mul i64 %i4, 16
  br i1 %6, label %then, label %else

loop.exit3:                                       ; preds = %loop1
  %23 = add nuw nsw i64 %i, 1
  br label %loop

then:                                             ; preds = %loop.body2
  %24 = add i64 %22, 0
  %25 = add i64 %20, 0
  store <8 x float> zeroinitializer, ptr %7, align 32
  %26 = add i64 %22, 8
  %27 = add i64 %20, 0
  store <8 x float> zeroinitializer, ptr %8, align 32
  %28 = add i64 %22, 0
  %29 = add i64 %20, 1
  store <8 x float> zeroinitializer, ptr %9, align 32
  %30 = add i64 %22, 8
  %31 = add i64 %20, 1
  store <8 x float> zeroinitializer, ptr %10, align 32
  %32 = add i64 %22, 0
  %33 = add i64 %20, 2
  store <8 x float> zeroinitializer, ptr %11, align 32
  %34 = add i64 %22, 8
  %35 = add i64 %20, 2
  store <8 x float> zeroinitializer, ptr %12, align 32
  %36 = add i64 %22, 0
  %37 = add i64 %20, 3
  store <8 x float> zeroinitializer, ptr %13, align 32
  %38 = add i64 %22, 8
  %39 = add i64 %20, 3
  store <8 x float> zeroinitializer, ptr %14, align 32
  %40 = add i64 %22, 0
  %41 = add i64 %20, 4
  store <8 x float> zeroinitializer, ptr %15, align 32
  %42 = add i64 %22, 8
  %43 = add i64 %20, 4
  store <8 x float> zeroinitializer, ptr %16, align 32
  %44 = add i64 %22, 0
  %45 = add i64 %20, 5
  store <8 x float> zeroinitializer, ptr %17, align 32
  %46 = add i64 %22, 8
  %47 = add i64 %20, 5
  store <8 x float> zeroinitializer, ptr %18, align 32
  br label %join

else:                                             ; preds = %loop.body2
  %48 = add i64 %22, 0
  %49 = add i64 %20, 0
  %50 = add i64 0, %49
  %51 = mul i64 %50, 64
  %52 = add i64 %51, %48
  %53 = getelementptr inbounds float, ptr %3, i64 %52
  %54 = load <8 x float>, ptr %53, align 4
  store <8 x float> %54, ptr %7, align 32
  %55 = add i64 %22, 8
  %56 = add i64 %20, 0
  %57 = add i64 0, %56
  %58 = mul i64 %57, 64
  %59 = add i64 %58, %55
  %60 = getelementptr inbounds float, ptr %3, i64 %59
  %61 = load <8 x float>, ptr %60, align 4
  store <8 x float> %61, ptr %8, align 32
  %62 = add i64 %22, 0
  %63 = add i64 %20, 1
  %64 = add i64 0, %63
  %65 = mul i64 %64, 64
  %66 = add i64 %65, %62
  %67 = getelementptr inbounds float, ptr %3, i64 %66
  %68 = load <8 x float>, ptr %67, align 4
  store <8 x float> %68, ptr %9, align 32
  %69 = add i64 %22, 8
  %70 = add i64 %20, 1
  %71 = add i64 0, %70
  %72 = mul i64 %71, 64
  %73 = add i64 %72, %69
  %74 = getelementptr inbounds float, ptr %3, i64 %73
  %75 = load <8 x float>, ptr %74, align 4
  store <8 x float> %75, ptr %10, align 32
  %76 = add i64 %22, 0
  %77 = add i64 %20, 2
  %78 = add i64 0, %77
  %79 = mul i64 %78, 64
  %80 = add i64 %79, %76
  %81 = getelementptr inbounds float, ptr %3, i64 %80
  %82 = load <8 x float>, ptr %81, align 4
  store <8 x float> %82, ptr %11, align 32
  %83 = add i64 %22, 8
  %84 = add i64 %20, 2
  %85 = add i64 0, %84
  %86 = mul i64 %85, 64
  %87 = add i64 %86, %83
  %88 = getelementptr inbounds float, ptr %3, i64 %87
  %89 = load <8 x float>, ptr %88, align 4
  store <8 x float> %89, ptr %12, align 32
  %90 = add i64 %22, 0
  %91 = add i64 %20, 3
  %92 = add i64 0, %91
  %93 = mul i64 %92, 64
  %94 = add i64 %93, %90
  %95 = getelementptr inbounds float, ptr %3, i64 %94
  %96 = load <8 x float>, ptr %95, align 4
  store <8 x float> %96, ptr %13, align 32
  %97 = add i64 %22, 8
  %98 = add i64 %20, 3
  %99 = add i64 0, %98
  %100 = mul i64 %99, 64
  %101 = add i64 %100, %97
  %102 = getelementptr inbounds float, ptr %3, i64 %101
  %103 = load <8 x float>, ptr %102, align 4
  store <8 x float> %103, ptr %14, align 32
  %104 = add i64 %22, 0
  %105 = add i64 %20, 4
  %106 = add i64 0, %105
  %107 = mul i64 %106, 64
  %108 = add i64 %107, %104
  %109 = getelementptr inbounds float, ptr %3, i64 %108
  %110 = load <8 x float>, ptr %109, align 4
  store <8 x float> %110, ptr %15, align 32
  %111 = add i64 %22, 8
  %112 = add i64 %20, 4
  %113 = add i64 0, %112
  %114 = mul i64 %113, 64
  %115 = add i64 %114, %111
  %116 = getelementptr inbounds float, ptr %3, i64 %115
  %117 = load <8 x float>, ptr %116, align 4
  store <8 x float> %117, ptr %16, align 32
  %118 = add i64 %22, 0
  %119 = add i64 %20, 5
  %120 = add i64 0, %119
  %121 = mul i64 %120, 64
  %122 = add i64 %121, %118
  %123 = getelementptr inbounds float, ptr %3, i64 %122
  %124 = load <8 x float>, ptr %123, align 4
  store <8 x float> %124, ptr %17, align 32
  %125 = add i64 %22, 8
  %126 = add i64 %20, 5
  %127 = add i64 0, %126
  %128 = mul i64 %127, 64
  %129 = add i64 %128, %125
  %130 = getelementptr inbounds float, ptr %3, i64 %129
  %131 = load <8 x float>, ptr %130, align 4
  store <8 x float> %131, ptr %18, align 32
  br label %join

join:                                             ; preds = %else, %then
  %132 = add i64 %20, 0
  %133 = mul i64 %132, %1
  %134 = add i64 %133, 0
  %135 = getelementptr inbounds float, ptr %0, i64 %134
  %136 = call ptr asm "", "=r,0"(ptr %135)
  %137 = add i64 %20, 1
  %138 = mul i64 %137, %1
  %139 = add i64 %138, 0
  %140 = getelementptr inbounds float, ptr %0, i64 %139
  %141 = call ptr asm "", "=r,0"(ptr %140)
  %142 = add i64 %20, 2
  %143 = mul i64 %142, %1
  %144 = add i64 %143, 0
  %145 = getelementptr inbounds float, ptr %0, i64 %144
  %146 = call ptr asm "", "=r,0"(ptr %145)
  %147 = add i64 %20, 3
  %148 = mul i64 %147, %1
  %149 = add i64 %148, 0
  %150 = getelementptr inbounds float, ptr %0, i64 %149
  %151 = call ptr asm "", "=r,0"(ptr %150)
  %152 = add i64 %20, 4
  %153 = mul i64 %152, %1
  %154 = add i64 %153, 0
  %155 = getelementptr inbounds float, ptr %0, i64 %154
  %156 = call ptr asm "", "=r,0"(ptr %155)
  %157 = add i64 %20, 5
  %158 = mul i64 %157, %1
  %159 = add i64 %158, 0
  %160 = getelementptr inbounds float, ptr %0, i64 %159
  %161 = call ptr asm "", "=r,0"(ptr %160)
  br label %loop5

loop5:                                            ; preds = %loop.body6, %join
  %i8 = phi i64 [ 0, %join ], [ %211, %loop.body6 ]
  %162 = icmp slt i64 %i8, 64
  br i1 %162, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %163 = add i64 %22, 0
  %164 = add i64 0, %i8
  %165 = mul i64 %164, 64
  %166 = add i64 %165, %163
  %167 = getelementptr inbounds float, ptr %2, i64 %166
  %168 = load <8 x float>, ptr %167, align 4
  %169 = add i64 %22, 8
  %170 = add i64 0, %i8
  %171 = mul i64 %170, 64
  %172 = add i64 %171, %169
  %173 = getelementptr inbounds float, ptr %2, i64 %172
  %174 = load <8 x float>, ptr %173, align 4
  %175 = getelementptr inbounds float, ptr %136, i64 %i8
  %176 = load float, ptr %175, align 4
  %.splatinsert = insertelement <8 x float> poison, float %176, i64 0
  %.splat = shufflevector <8 x float> %.splatinsert, <8 x float> poison, <8 x i32> zeroinitializer
  %177 = load <8 x float>, ptr %7, align 32
  %178 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat, <8 x float> %168, <8 x float> %177)
  store <8 x float> %178, ptr %7, align 32
  %179 = load <8 x float>, ptr %8, align 32
  %180 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat, <8 x float> %174, <8 x float> %179)
  store <8 x float> %180, ptr %8, align 32
  %181 = getelementptr inbounds float, ptr %141, i64 %i8
  %182 = load float, ptr %181, align 4
  %.splatinsert9 = insertelement <8 x float> poison, float %182, i64 0
  %.splat10 = shufflevector <8 x float> %.splatinsert9, <8 x float> poison, <8 x i32> zeroinitializer
  %183 = load <8 x float>, ptr %9, align 32
  %184 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat10, <8 x float> %168, <8 x float> %183)
  store <8 x float> %184, ptr %9, align 32
  %185 = load <8 x float>, ptr %10, align 32
  %186 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat10, <8 x float> %174, <8 x float> %185)
  store <8 x float> %186, ptr %10, align 32
  %187 = getelementptr inbounds float, ptr %146, i64 %i8
  %188 = load float, ptr %187, align 4
  %.splatinsert11 = insertelement <8 x float> poison, float %188, i64 0
  %.splat12 = shufflevector <8 x float> %.splatinsert11, <8 x float> poison, <8 x i32> zeroinitializer
  %189 = load <8 x float>, ptr %11, align 32
  %190 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat12, <8 x float> %168, <8 x float> %189)
  store <8 x float> %190, ptr %11, align 32
  %191 = load <8 x float>, ptr %12, align 32
  %192 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat12, <8 x float> %174, <8 x float> %191)
  store <8 x float> %192, ptr %12, align 32
  %193 = getelementptr inbounds float, ptr %151, i64 %i8
  %194 = load float, ptr %193, align 4
  %.splatinsert13 = insertelement <8 x float> poison, float %194, i64 0
  %.splat14 = shufflevector <8 x float> %.splatinsert13, <8 x float> poison, <8 x i32> zeroinitializer
  %195 = load <8 x float>, ptr %13, align 32
  %196 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat14, <8 x float> %168, <8 x float> %195)
  store <8 x float> %196, ptr %13, align 32
  %197 = load <8 x float>, ptr %14, align 32
  %198 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat14, <8 x float> %174, <8 x float> %197)
  store <8 x float> %198, ptr %14, align 32
  %199 = getelementptr inbounds float, ptr %156, i64 %i8
  %200 = load float, ptr %199, align 4
  %.splatinsert15 = insertelement <8 x float> poison, float %200, i64 0
  %.splat16 = shufflevector <8 x float> %.splatinsert15, <8 x float> poison, <8 x i32> zeroinitializer
  %201 = load <8 x float>, ptr %15, align 32
  %202 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat16, <8 x float> %168, <8 x float> %201)
  store <8 x float> %202, ptr %15, align 32
  %203 = load <8 x float>, ptr %16, align 32
  %204 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat16, <8 x float> %174, <8 x float> %203)
  store <8 x float> %204, ptr %16, align 32
  %205 = getelementptr inbounds float, ptr %161, i64 %i8
  %206 = load float, ptr %205, align 4
  %.splatinsert17 = insertelement <8 x float> poison, float %206, i64 0
  %.splat18 = shufflevector <8 x float> %.splatinsert17, <8 x float> poison, <8 x i32> zeroinitializer
  %207 = load <8 x float>, ptr %17, align 32
  %208 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat18, <8 x float> %168, <8 x float> %207)
  store <8 x float> %208, ptr %17, align 32
  %209 = load <8 x float>, ptr %18, align 32
  %210 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat18, <8 x float> %174, <8 x float> %209)
  store <8 x float> %210, ptr %18, align 32
  %211 = add nuw nsw i64 %i8, 1
  br label %loop5, !llvm.loop !2

loop.exit7:                                       ; preds = %loop5
  %212 = add i64 %22, 0
  %213 = add i64 %20, 0
  %214 = mul i64 %213, %5
  %215 = add i64 0, %214
  %216 = mul i64 %212, 1
  %217 = add i64 %215, %216
  %218 = getelementptr inbounds float, ptr %4, i64 %217
  %219 = load <8 x float>, ptr %7, align 32
  store <8 x float> %219, ptr %218, align 4
  %220 = add i64 %22, 8
  %221 = add i64 %20, 0
  %222 = mul i64 %221, %5
  %223 = add i64 0, %222
  %224 = mul i64 %220, 1
  %225 = add i64 %223, %224
  %226 = getelementptr inbounds float, ptr %4, i64 %225
  %227 = load <8 x float>, ptr %8, align 32
  store <8 x float> %227, ptr %226, align 4
  %228 = add i64 %22, 0
  %229 = add i64 %20, 1
  %230 = mul i64 %229, %5
  %231 = add i64 0, %230
  %232 = mul i64 %228, 1
  %233 = add i64 %231, %232
  %234 = getelementptr inbounds float, ptr %4, i64 %233
  %235 = load <8 x float>, ptr %9, align 32
  store <8 x float> %235, ptr %234, align 4
  %236 = add i64 %22, 8
  %237 = add i64 %20, 1
  %238 = mul i64 %237, %5
  %239 = add i64 0, %238
  %240 = mul i64 %236, 1
  %241 = add i64 %239, %240
  %242 = getelementptr inbounds float, ptr %4, i64 %241
  %243 = load <8 x float>, ptr %10, align 32
  store <8 x float> %243, ptr %242, align 4
  %244 = add i64 %22, 0
  %245 = add i64 %20, 2
  %246 = mul i64 %245, %5
  %247 = add i64 0, %246
  %248 = mul i64 %244, 1
  %249 = add i64 %247, %248
  %250 = getelementptr inbounds float, ptr %4, i64 %249
  %251 = load <8 x float>, ptr %11, align 32
  store <8 x float> %251, ptr %250, align 4
  %252 = add i64 %22, 8
  %253 = add i64 %20, 2
  %254 = mul i64 %253, %5
  %255 = add i64 0, %254
  %256 = mul i64 %252, 1
  %257 = add i64 %255, %256
  %258 = getelementptr inbounds float, ptr %4, i64 %257
  %259 = load <8 x float>, ptr %12, align 32
  store <8 x float> %259, ptr %258, align 4
  %260 = add i64 %22, 0
  %261 = add i64 %20, 3
  %262 = mul i64 %261, %5
  %263 = add i64 0, %262
  %264 = mul i64 %260, 1
  %265 = add i64 %263, %264
  %266 = getelementptr inbounds float, ptr %4, i64 %265
  %267 = load <8 x float>, ptr %13, align 32
  store <8 x float> %267, ptr %266, align 4
  %268 = add i64 %22, 8
  %269 = add i64 %20, 3
  %270 = mul i64 %269, %5
  %271 = add i64 0, %270
  %272 = mul i64 %268, 1
  %273 = add i64 %271, %272
  %274 = getelementptr inbounds float, ptr %4, i64 %273
  %275 = load <8 x float>, ptr %14, align 32
  store <8 x float> %275, ptr %274, align 4
  %276 = add i64 %22, 0
  %277 = add i64 %20, 4
  %278 = mul i64 %277, %5
  %279 = add i64 0, %278
  %280 = mul i64 %276, 1
  %281 = add i64 %279, %280
  %282 = getelementptr inbounds float, ptr %4, i64 %281
  %283 = load <8 x float>, ptr %15, align 32
  store <8 x float> %283, ptr %282, align 4
  %284 = add i64 %22, 8
  %285 = add i64 %20, 4
  %286 = mul i64 %285, %5
  %287 = add i64 0, %286
  %288 = mul i64 %284, 1
  %289 = add i64 %287, %288
  %290 = getelementptr inbounds float, ptr %4, i64 %289
  %291 = load <8 x float>, ptr %16, align 32
  store <8 x float> %291, ptr %290, align 4
  %292 = add i64 %22, 0
  %293 = add i64 %20, 5
  %294 = mul i64 %293, %5
  %295 = add i64 0, %294
  %296 = mul i64 %292, 1
  %297 = add i64 %295, %296
  %298 = getelementptr inbounds float, ptr %4, i64 %297
  %299 = load <8 x float>, ptr %17, align 32
  store <8 x float> %299, ptr %298, align 4
  %300 = add i64 %22, 8
  %301 = add i64 %20, 5
  %302 = mul i64 %301, %5
  %303 = add i64 0, %302
  %304 = mul i64 %300, 1
  %305 = add i64 %303, %304
  %306 = getelementptr inbounds float, ptr %4, i64 %305
  %307 = load <8 x float>, ptr %18, align 32
  store <8 x float> %307, ptr %306, align 4
  %308 = add nuw nsw i64 %i4, 1
  br label %loop1

loop19:                                           ; preds = %loop.exit28, %loop.exit
  %i22 = phi i64 [ 0, %loop.exit ], [ %393, %loop.exit28 ]
  %309 = icmp slt i64 %i22, 4
  br i1 %309, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  %310 = mul i64 %i22, 16
  br i1 %6, label %then23, label %else24

loop.exit21:                                      ; preds = %loop19
  ret void

then23:                                           ; preds = %loop.body20
  %311 = add i64 %310, 0
  store <8 x float> zeroinitializer, ptr %7, align 32
  %312 = add i64 %310, 8
  store <8 x float> zeroinitializer, ptr %8, align 32
  %313 = add i64 %310, 0
  store <8 x float> zeroinitializer, ptr %9, align 32
  %314 = add i64 %310, 8
  store <8 x float> zeroinitializer, ptr %10, align 32
  br label %join25

else24:                                           ; preds = %loop.body20
  %315 = add i64 %310, 0
  %316 = add i64 8064, %315
  %317 = getelementptr inbounds float, ptr %3, i64 %316
  %318 = load <8 x float>, ptr %317, align 4
  store <8 x float> %318, ptr %7, align 32
  %319 = add i64 %310, 8
  %320 = add i64 8064, %319
  %321 = getelementptr inbounds float, ptr %3, i64 %320
  %322 = load <8 x float>, ptr %321, align 4
  store <8 x float> %322, ptr %8, align 32
  %323 = add i64 %310, 0
  %324 = add i64 8128, %323
  %325 = getelementptr inbounds float, ptr %3, i64 %324
  %326 = load <8 x float>, ptr %325, align 4
  store <8 x float> %326, ptr %9, align 32
  %327 = add i64 %310, 8
  %328 = add i64 8128, %327
  %329 = getelementptr inbounds float, ptr %3, i64 %328
  %330 = load <8 x float>, ptr %329, align 4
  store <8 x float> %330, ptr %10, align 32
  br label %join25

join25:                                           ; preds = %else24, %then23
  %331 = mul i64 126, %1
  %332 = add i64 %331, 0
  %333 = getelementptr inbounds float, ptr %0, i64 %332
  %334 = call ptr asm "", "=r,0"(ptr %333)
  %335 = mul i64 127, %1
  %336 = add i64 %335, 0
  %337 = getelementptr inbounds float, ptr %0, i64 %336
  %338 = call ptr asm "", "=r,0"(ptr %337)
  br label %loop26

loop26:                                           ; preds = %loop.body27, %join25
  %i29 = phi i64 [ 0, %join25 ], [ %364, %loop.body27 ]
  %339 = icmp slt i64 %i29, 64
  br i1 %339, label %loop.body27, label %loop.exit28

loop.body27:                                      ; preds = %loop26
  %340 = add i64 %310, 0
  %341 = add i64 0, %i29
  %342 = mul i64 %341, 64
  %343 = add i64 %342, %340
  %344 = getelementptr inbounds float, ptr %2, i64 %343
  %345 = load <8 x float>, ptr %344, align 4
  %346 = add i64 %310, 8
  %347 = add i64 0, %i29
  %348 = mul i64 %347, 64
  %349 = add i64 %348, %346
  %350 = getelementptr inbounds float, ptr %2, i64 %349
  %351 = load <8 x float>, ptr %350, align 4
  %352 = getelementptr inbounds float, ptr %334, i64 %i29
  %353 = load float, ptr %352, align 4
  %.splatinsert30 = insertelement <8 x float> poison, float %353, i64 0
  %.splat31 = shufflevector <8 x float> %.splatinsert30, <8 x float> poison, <8 x i32> zeroinitializer
  %354 = load <8 x float>, ptr %7, align 32
  %355 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat31, <8 x float> %345, <8 x float> %354)
  store <8 x float> %355, ptr %7, align 32
  %356 = load <8 x float>, ptr %8, align 32
  %357 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat31, <8 x float> %351, <8 x float> %356)
  store <8 x float> %357, ptr %8, align 32
  %358 = getelementptr inbounds float, ptr %338, i64 %i29
  %359 = load float, ptr %358, align 4
  %.splatinsert32 = insertelement <8 x float> poison, float %359, i64 0
  %.splat33 = shufflevector <8 x float> %.splatinsert32, <8 x float> poison, <8 x i32> zeroinitializer
  %360 = load <8 x float>, ptr %9, align 32
  %361 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat33, <8 x float> %345, <8 x float> %360)
  store <8 x float> %361, ptr %9, align 32
  %362 = load <8 x float>, ptr %10, align 32
  %363 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat33, <8 x float> %351, <8 x float> %362)
  store <8 x float> %363, ptr %10, align 32
  %364 = add nuw nsw i64 %i29, 1
  br label %loop26, !llvm.loop !4

loop.exit28:                                      ; preds = %loop26
  %365 = add i64 %310, 0
  %366 = mul i64 126, %5
  %367 = add i64 0, %366
  %368 = mul i64 %365, 1
  %369 = add i64 %367, %368
  %370 = getelementptr inbounds float, ptr %4, i64 %369
  %371 = load <8 x float>, ptr %7, align 32
  store <8 x float> %371, ptr %370, align 4
  %372 = add i64 %310, 8
  %373 = mul i64 126, %5
  %374 = add i64 0, %373
  %375 = mul i64 %372, 1
  %376 = add i64 %374, %375
  %377 = getelementptr inbounds float, ptr %4, i64 %376
  %378 = load <8 x float>, ptr %8, align 32
  store <8 x float> %378, ptr %377, align 4
  %379 = add i64 %310, 0
  %380 = mul i64 127, %5
  %381 = add i64 0, %380
  %382 = mul i64 %379, 1
  %383 = add i64 %381, %382
  %384 = getelementptr inbounds float, ptr %4, i64 %383
  %385 = load <8 x float>, ptr %9, align 32
  store <8 x float> %385, ptr %384, align 4
  %386 = add i64 %310, 8
  %387 = mul i64 127, %5
  %388 = add i64 0, %387
  %389 = mul i64 %386, 1
  %390 = add i64 %388, %389
  %391 = getelementptr inbounds float, ptr %4, i64 %390
  %392 = load <8 x float>, ptr %10, align 32
  store <8 x float> %392, ptr %391, align 4
  %393 = add nuw nsw i64 %i22, 1
  br label %loop19
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare <8 x float> @llvm.fmuladd.v8f32(<8 x float>, <8 x float>, <8 x float>) #1

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: write)
declare void @llvm.memset.p0.i64(ptr nocapture writeonly, i8, i64, i1 immarg) #3

attributes #0 = { nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { noinline nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #3 = { nocallback nofree nounwind willreturn memory(argmem: write) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
!2 = distinct !{!2, !3}
!3 = !{!"llvm.loop.unroll.count", i32 2}
!4 = distinct !{!4, !3}
