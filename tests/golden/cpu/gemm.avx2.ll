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
  %5 = alloca i8, i64 16384, align 64
  %6 = alloca float, i64 8192, align 64
  %7 = alloca float, i64 8192, align 64
  %8 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %8, align 8
  %9 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %10 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 0
  %data = load ptr, ptr %10, align 8
  %11 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 1, i32 0
  %12 = load i64, ptr %11, align 4
  %13 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 2, i32 0
  %14 = load i64, ptr %13, align 4
  %15 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 1, i32 1
  %16 = load i64, ptr %15, align 4
  %17 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 2, i32 1
  %18 = load i64, ptr %17, align 4
  %19 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %20 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 0
  %data1 = load ptr, ptr %20, align 8
  %21 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 1, i32 0
  %22 = load i64, ptr %21, align 4
  %23 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 2, i32 0
  %24 = load i64, ptr %23, align 4
  %25 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 1, i32 1
  %26 = load i64, ptr %25, align 4
  %27 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 2, i32 1
  %28 = load i64, ptr %27, align 4
  %29 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 2
  %30 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 0
  %data2 = load ptr, ptr %30, align 8
  %31 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 1, i32 0
  %32 = load i64, ptr %31, align 4
  %33 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 2, i32 0
  %34 = load i64, ptr %33, align 4
  %35 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 1, i32 1
  %36 = load i64, ptr %35, align 4
  %37 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 2, i32 1
  %38 = load i64, ptr %37, align 4
  %39 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %40 = load i64, ptr %39, align 4
  %41 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 1
  %42 = load i64, ptr %41, align 4
  %program_id = alloca [3 x i64], align 8
  %43 = srem i64 %22, 64
  %44 = icmp ne i64 %43, 0
  %45 = zext i1 %44 to i64
  %46 = sdiv i64 %22, 64
  %47 = add i64 %46, %45
  %48 = mul i64 1, %47
  %49 = sitofp i64 %47 to double
  %50 = fmul double 1.638800e+04, %49
  %51 = srem i64 %26, 64
  %52 = icmp ne i64 %51, 0
  %53 = zext i1 %52 to i64
  %54 = sdiv i64 %26, 64
  %55 = add i64 %54, %53
  %56 = mul i64 %48, %55
  %57 = sitofp i64 %55 to double
  %58 = fmul double %50, %57
  %59 = mul i64 1, %40
  %60 = fcmp ole double %58, 0x41C0000000000000
  %61 = icmp sgt i64 %59, 1
  %62 = and i1 %61, %60
  %63 = select i1 %62, i64 %56, i64 0
  %64 = mul i64 %63, 4
  %65 = add i64 0, %64
  %66 = mul i64 %63, 16384
  %67 = add i64 0, %66
  %68 = add i64 %65, 63
  %69 = and i64 %68, -64
  %70 = add i64 %69, %67
  %71 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 8
  %workspace_fn = load ptr, ptr %71, align 8
  %72 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 9
  %73 = load ptr, ptr %72, align 8
  %74 = icmp sgt i64 %70, 0
  %75 = icmp ne ptr %workspace_fn, null
  %76 = and i1 %75, %74
  br i1 %76, label %then, label %join

then:                                             ; preds = %entry
  %77 = call ptr %workspace_fn(ptr %73, i64 %70, i64 %65)
  br label %join

join:                                             ; preds = %then, %entry
  %78 = phi ptr [ %77, %then ], [ null, %entry ]
  %79 = getelementptr i8, ptr %78, i64 0
  %80 = add i64 %69, 0
  %81 = getelementptr i8, ptr %78, i64 %80
  %82 = icmp sgt i64 %63, 0
  %83 = icmp ne ptr %78, null
  %84 = and i1 %83, %82
  %85 = sub i64 %2, %1
  %86 = call i64 @llvm.smax.i64(i64 %85, i64 1)
  %87 = sdiv i64 %1, %86
  %88 = and i64 %87, 1
  %89 = sdiv i64 %85, 2
  %90 = mul i64 %88, %89
  br label %loop

loop:                                             ; preds = %join38, %join
  %i = phi i64 [ 0, %join ], [ %247, %join38 ]
  %91 = icmp slt i64 %i, %85
  br i1 %91, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %92 = add i64 %i, %90
  %93 = sub i64 %92, %85
  %94 = icmp sge i64 %92, %85
  %95 = select i1 %94, i64 %93, i64 %92
  %96 = add i64 %1, %95
  %97 = srem i64 %96, %42
  %98 = sdiv i64 %96, %42
  %99 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %98, ptr %99, align 4
  %100 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 %97, ptr %100, align 4
  %101 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %101, align 4
  %102 = add i64 %16, 63
  br i1 false, label %then3, label %join4

loop.exit:                                        ; preds = %loop
  ret void

then3:                                            ; preds = %loop.body
  %103 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 4
  %104 = load ptr, ptr %103, align 8
  %105 = icmp ne ptr %104, null
  br i1 %105, label %then5, label %join6

join4:                                            ; preds = %join6, %loop.body
  %106 = sdiv i64 %102, 64
  %107 = sub i64 0, %102
  %108 = select i1 false, i64 0, i64 %107
  %109 = select i1 false, i64 %108, i64 %106
  %110 = mul i64 %97, 64
  %111 = mul i64 %98, 128
  %112 = icmp eq i64 %38, 1
  %113 = add i64 %111, 128
  %114 = icmp sle i64 %113, %32
  %115 = icmp sge i64 %111, 0
  %116 = and i1 %115, %114
  %117 = and i1 %112, %116
  %118 = add i64 %110, 64
  %119 = icmp sle i64 %118, %36
  %120 = icmp sge i64 %110, 0
  %121 = and i1 %120, %119
  %122 = and i1 %117, %121
  %123 = mul i64 %111, %34
  %124 = add i64 0, %123
  %125 = mul i64 %110, %38
  %126 = add i64 %124, %125
  %127 = getelementptr float, ptr %data2, i64 %126
  %128 = select i1 %122, ptr %127, ptr %6
  %129 = select i1 %122, i64 %34, i64 64
  br label %loop7

then5:                                            ; preds = %then3
  %130 = getelementptr inbounds { i32, i64, i32, i64, i64 }, ptr %104, i32 0, i32 0
  %131 = atomicrmw or ptr %130, i32 1 monotonic, align 4
  br label %join6

join6:                                            ; preds = %then5, %then3
  br label %join4

loop7:                                            ; preds = %join30, %join4
  %i10 = phi i64 [ 0, %join4 ], [ %235, %join30 ]
  %132 = icmp slt i64 %i10, %109
  br i1 %132, label %loop.body8, label %loop.exit9

loop.body8:                                       ; preds = %loop7
  %133 = icmp eq i64 %i10, 0
  %134 = add i64 %i10, 1
  %135 = icmp eq i64 %134, %109
  %136 = mul i64 %i10, 64
  %137 = icmp slt i64 %136, %22
  %138 = icmp sge i64 %136, 0
  %139 = and i1 %138, %137
  %140 = srem i64 %136, 64
  %141 = icmp eq i64 %140, 0
  %142 = and i1 %139, %141
  %143 = and i1 %84, %142
  %144 = sdiv i64 %136, 64
  %145 = mul i64 0, %47
  %146 = add i64 %145, %144
  %147 = icmp slt i64 %110, %26
  %148 = icmp sge i64 %110, 0
  %149 = and i1 %148, %147
  %150 = srem i64 %110, 64
  %151 = icmp eq i64 %150, 0
  %152 = and i1 %149, %151
  %153 = and i1 %143, %152
  %154 = sdiv i64 %110, 64
  %155 = mul i64 %146, %55
  %156 = add i64 %155, %154
  %157 = select i1 %153, i64 %156, i64 0
  %158 = getelementptr i32, ptr %79, i64 %157
  %159 = mul i64 %157, 16384
  %160 = getelementptr i8, ptr %81, i64 %159
  br i1 %153, label %then11, label %join12

loop.exit9:                                       ; preds = %loop7
  %161 = icmp sge i64 0, %109
  br i1 %161, label %then31, label %join32

then11:                                           ; preds = %loop.body8
  %162 = load atomic i32, ptr %158 acquire, align 4
  %163 = icmp eq i32 %162, 2
  br label %join12

join12:                                           ; preds = %then11, %loop.body8
  %164 = phi i1 [ %163, %then11 ], [ false, %loop.body8 ]
  %165 = xor i1 %164, true
  %166 = and i1 %153, %165
  br i1 %166, label %then13, label %join14

then13:                                           ; preds = %join12
  %167 = cmpxchg ptr %158, i32 0, i32 1 monotonic monotonic, align 4
  %168 = extractvalue { i32, i1 } %167, 1
  br label %join14

join14:                                           ; preds = %then13, %join12
  %169 = phi i1 [ %168, %then13 ], [ false, %join12 ]
  %170 = or i1 %164, %169
  %171 = select i1 %170, ptr %160, ptr %5
  %172 = xor i1 %164, true
  br i1 %172, label %then15, label %join16

then15:                                           ; preds = %join14
  %173 = icmp eq i64 %28, 1
  %174 = add i64 %136, 64
  %175 = icmp sle i64 %174, %22
  %176 = icmp sge i64 %136, 0
  %177 = and i1 %176, %175
  %178 = and i1 %173, %177
  %179 = add i64 %110, 64
  %180 = icmp sle i64 %179, %26
  %181 = icmp sge i64 %110, 0
  %182 = and i1 %181, %180
  %183 = and i1 %178, %182
  %184 = xor i1 %183, true
  br i1 %184, label %then17, label %join18

join16:                                           ; preds = %join28, %join14
  %185 = icmp eq i64 %18, 1
  %186 = add i64 %111, 128
  %187 = icmp sle i64 %186, %12
  %188 = icmp sge i64 %111, 0
  %189 = and i1 %188, %187
  %190 = and i1 %185, %189
  %191 = add i64 %136, 64
  %192 = icmp sle i64 %191, %16
  %193 = icmp sge i64 %136, 0
  %194 = and i1 %193, %192
  %195 = and i1 %190, %194
  %196 = xor i1 %195, true
  br i1 %196, label %then29, label %join30

then17:                                           ; preds = %then15
  %197 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %136, ptr %197, align 4
  %198 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %110, ptr %198, align 4
  %199 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %200 = load ptr, ptr %199, align 8
  call void %200(ptr %19, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %4)
  br label %join18

join18:                                           ; preds = %then17, %then15
  %201 = mul i64 %136, %24
  %202 = add i64 0, %201
  %203 = mul i64 %110, %28
  %204 = add i64 %202, %203
  %205 = getelementptr float, ptr %data1, i64 %204
  %206 = select i1 %183, ptr %205, ptr %4
  %207 = select i1 %183, i64 %24, i64 64
  br label %loop19

loop19:                                           ; preds = %loop.exit25, %join18
  %i22 = phi i64 [ 0, %join18 ], [ %221, %loop.exit25 ]
  %208 = icmp slt i64 %i22, 64
  br i1 %208, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  br label %loop23

loop.exit21:                                      ; preds = %loop19
  br i1 %169, label %then27, label %join28

loop23:                                           ; preds = %loop.body24, %loop.body20
  %i26 = phi i64 [ 0, %loop.body20 ], [ %220, %loop.body24 ]
  %209 = icmp slt i64 %i26, 64
  br i1 %209, label %loop.body24, label %loop.exit25

loop.body24:                                      ; preds = %loop23
  %210 = mul i64 %i22, %207
  %211 = add i64 0, %210
  %212 = mul i64 %i26, 1
  %213 = add i64 %211, %212
  %214 = getelementptr inbounds float, ptr %206, i64 %213
  %215 = load float, ptr %214, align 4
  %216 = add i64 0, %i22
  %217 = mul i64 %216, 64
  %218 = add i64 %217, %i26
  %219 = getelementptr inbounds float, ptr %171, i64 %218
  store float %215, ptr %219, align 4
  %220 = add nuw nsw i64 %i26, 1
  br label %loop23, !llvm.loop !0

loop.exit25:                                      ; preds = %loop23
  %221 = add nuw nsw i64 %i22, 1
  br label %loop19

then27:                                           ; preds = %loop.exit21
  store atomic i32 2, ptr %158 release, align 4
  br label %join28

join28:                                           ; preds = %then27, %loop.exit21
  br label %join16

then29:                                           ; preds = %join16
  %222 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %111, ptr %222, align 4
  %223 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %136, ptr %223, align 4
  %224 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %225 = load ptr, ptr %224, align 8
  call void %225(ptr %9, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, i64 0, ptr %3)
  br label %join30

join30:                                           ; preds = %then29, %join16
  %226 = mul i64 %111, %14
  %227 = add i64 0, %226
  %228 = mul i64 %136, %18
  %229 = add i64 %227, %228
  %230 = getelementptr float, ptr %data, i64 %229
  %231 = select i1 %195, ptr %230, ptr %3
  %232 = select i1 %195, i64 %14, i64 64
  %233 = select i1 %135, ptr %128, ptr %7
  %234 = select i1 %135, i64 %129, i64 64
  call void @tj_dot_0(ptr %231, i64 %232, ptr %171, ptr %7, ptr %233, i64 %234, i1 %133)
  %235 = add nuw nsw i64 %i10, 1
  br label %loop7

then31:                                           ; preds = %loop.exit9
  br label %loop33

join32:                                           ; preds = %loop.exit35, %loop.exit9
  %236 = xor i1 %122, true
  br i1 %236, label %then37, label %join38

loop33:                                           ; preds = %loop.body34, %then31
  %i36 = phi i64 [ 0, %then31 ], [ %242, %loop.body34 ]
  %237 = icmp slt i64 %i36, 128
  br i1 %237, label %loop.body34, label %loop.exit35

loop.body34:                                      ; preds = %loop33
  %238 = mul i64 %i36, %129
  %239 = add i64 0, %238
  %240 = add i64 %239, 0
  %241 = getelementptr inbounds float, ptr %128, i64 %240
  call void @llvm.memset.p0.i64(ptr align 4 %241, i8 0, i64 256, i1 false)
  %242 = add nuw nsw i64 %i36, 1
  br label %loop33

loop.exit35:                                      ; preds = %loop33
  br label %join32

then37:                                           ; preds = %join32
  %243 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %111, ptr %243, align 4
  %244 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %110, ptr %244, align 4
  %245 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %246 = load ptr, ptr %245, align 8
  call void %246(ptr %29, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, ptr %6)
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
