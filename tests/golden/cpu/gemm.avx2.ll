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
  %46 = add i64 %25, 63
  %47 = sdiv i64 %46, 64
  %48 = mul i64 1, %47
  %49 = sitofp i64 %47 to double
  %50 = fmul double 1.638400e+04, %49
  %51 = add i64 %29, 63
  %52 = sdiv i64 %51, 64
  %53 = mul i64 %48, %52
  %54 = sitofp i64 %52 to double
  %55 = fmul double %50, %54
  %56 = mul i64 1, %43
  %57 = fcmp ole double %55, 0x4270000000000000
  %58 = icmp sgt i64 %56, 1
  %59 = and i1 %58, %57
  %60 = select i1 %59, i64 %53, i64 0
  %61 = mul i64 %60, 4
  %62 = add i64 0, %61
  %63 = mul i64 %60, 16384
  %64 = add i64 0, %63
  %65 = add i64 %62, 63
  %66 = and i64 %65, -64
  %67 = add i64 %66, %64
  %68 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 8
  %workspace_fn = load ptr, ptr %68, align 8
  %69 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 9
  %70 = load ptr, ptr %69, align 8
  %71 = icmp sgt i64 %67, 0
  %72 = icmp ne ptr %workspace_fn, null
  %73 = and i1 %72, %71
  br i1 %73, label %then, label %join

then:                                             ; preds = %entry
  %74 = call ptr %workspace_fn(ptr %70, i64 %67, i64 %62)
  br label %join

join:                                             ; preds = %then, %entry
  %75 = phi ptr [ %74, %then ], [ null, %entry ]
  %76 = getelementptr i8, ptr %75, i64 0
  %77 = add i64 %66, 0
  %78 = getelementptr i8, ptr %75, i64 %77
  %79 = icmp sgt i64 %60, 0
  %80 = icmp ne ptr %75, null
  %81 = and i1 %80, %79
  br label %loop

loop:                                             ; preds = %join38, %join
  %i = phi i64 [ %1, %join ], [ %230, %join38 ]
  %82 = icmp slt i64 %i, %2
  br i1 %82, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %83 = srem i64 %i, %45
  %84 = sdiv i64 %i, %45
  %85 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %84, ptr %85, align 4
  %86 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 %83, ptr %86, align 4
  %87 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %87, align 4
  %88 = add i64 %19, 63
  br i1 false, label %then3, label %join4

loop.exit:                                        ; preds = %loop
  ret void

then3:                                            ; preds = %loop.body
  %89 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 4
  %90 = load ptr, ptr %89, align 8
  %91 = icmp ne ptr %90, null
  br i1 %91, label %then5, label %join6

join4:                                            ; preds = %join6, %loop.body
  %92 = sdiv i64 %88, 64
  %93 = sub i64 0, %88
  %94 = select i1 false, i64 0, i64 %93
  %95 = select i1 false, i64 %94, i64 %92
  %96 = mul i64 %83, 64
  %97 = mul i64 %84, 128
  %98 = icmp eq i64 %41, 1
  %99 = add i64 %97, 128
  %100 = icmp sle i64 %99, %35
  %101 = icmp sge i64 %97, 0
  %102 = and i1 %101, %100
  %103 = and i1 %98, %102
  %104 = add i64 %96, 64
  %105 = icmp sle i64 %104, %39
  %106 = icmp sge i64 %96, 0
  %107 = and i1 %106, %105
  %108 = and i1 %103, %107
  %109 = mul i64 %97, %37
  %110 = add i64 0, %109
  %111 = mul i64 %96, %41
  %112 = add i64 %110, %111
  %113 = getelementptr float, ptr %data2, i64 %112
  %114 = select i1 %108, ptr %113, ptr %9
  %115 = select i1 %108, i64 %37, i64 64
  br label %loop7

then5:                                            ; preds = %then3
  %116 = getelementptr inbounds { i32, i64, i32, i64, i64 }, ptr %90, i32 0, i32 0
  %117 = atomicrmw or ptr %116, i32 1 monotonic, align 4
  br label %join6

join6:                                            ; preds = %then5, %then3
  br label %join4

loop7:                                            ; preds = %join30, %join4
  %i10 = phi i64 [ 0, %join4 ], [ %218, %join30 ]
  %118 = icmp slt i64 %i10, %95
  br i1 %118, label %loop.body8, label %loop.exit9

loop.body8:                                       ; preds = %loop7
  %119 = icmp eq i64 %i10, 0
  %120 = add i64 %i10, 1
  %121 = icmp eq i64 %120, %95
  %122 = mul i64 %i10, 64
  %123 = icmp slt i64 %122, %25
  %124 = icmp sge i64 %122, 0
  %125 = and i1 %124, %123
  %126 = srem i64 %122, 64
  %127 = icmp eq i64 %126, 0
  %128 = and i1 %125, %127
  %129 = and i1 %81, %128
  %130 = sdiv i64 %122, 64
  %131 = mul i64 0, %47
  %132 = add i64 %131, %130
  %133 = icmp slt i64 %96, %29
  %134 = icmp sge i64 %96, 0
  %135 = and i1 %134, %133
  %136 = srem i64 %96, 64
  %137 = icmp eq i64 %136, 0
  %138 = and i1 %135, %137
  %139 = and i1 %129, %138
  %140 = sdiv i64 %96, 64
  %141 = mul i64 %132, %52
  %142 = add i64 %141, %140
  %143 = select i1 %139, i64 %142, i64 0
  %144 = getelementptr i32, ptr %76, i64 %143
  %145 = mul i64 %143, 16384
  %146 = getelementptr i8, ptr %78, i64 %145
  store ptr %8, ptr %5, align 8
  store i1 true, ptr %6, align 1
  store i1 false, ptr %7, align 1
  br i1 %139, label %then11, label %join12

loop.exit9:                                       ; preds = %loop7
  %147 = icmp sge i64 0, %95
  br i1 %147, label %then31, label %join32

then11:                                           ; preds = %loop.body8
  %148 = load atomic i32, ptr %144 acquire, align 4
  %149 = icmp eq i32 %148, 2
  br i1 %149, label %then13, label %else

join12:                                           ; preds = %join14, %loop.body8
  %150 = load ptr, ptr %5, align 8
  %151 = load i1, ptr %6, align 1
  br i1 %151, label %then15, label %join16

then13:                                           ; preds = %then11
  store ptr %146, ptr %5, align 8
  store i1 false, ptr %6, align 1
  br label %join14

else:                                             ; preds = %then11
  %152 = cmpxchg ptr %144, i32 0, i32 1 monotonic monotonic, align 4
  %153 = extractvalue { i32, i1 } %152, 1
  store i1 %153, ptr %7, align 1
  %154 = select i1 %153, ptr %146, ptr %8
  store ptr %154, ptr %5, align 8
  br label %join14

join14:                                           ; preds = %else, %then13
  br label %join12

then15:                                           ; preds = %join12
  %155 = icmp eq i64 %31, 1
  %156 = add i64 %122, 64
  %157 = icmp sle i64 %156, %25
  %158 = icmp sge i64 %122, 0
  %159 = and i1 %158, %157
  %160 = and i1 %155, %159
  %161 = add i64 %96, 64
  %162 = icmp sle i64 %161, %29
  %163 = icmp sge i64 %96, 0
  %164 = and i1 %163, %162
  %165 = and i1 %160, %164
  %166 = xor i1 %165, true
  br i1 %166, label %then17, label %join18

join16:                                           ; preds = %join28, %join12
  %167 = icmp eq i64 %21, 1
  %168 = add i64 %97, 128
  %169 = icmp sle i64 %168, %15
  %170 = icmp sge i64 %97, 0
  %171 = and i1 %170, %169
  %172 = and i1 %167, %171
  %173 = add i64 %122, 64
  %174 = icmp sle i64 %173, %19
  %175 = icmp sge i64 %122, 0
  %176 = and i1 %175, %174
  %177 = and i1 %172, %176
  %178 = xor i1 %177, true
  br i1 %178, label %then29, label %join30

then17:                                           ; preds = %then15
  %179 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %122, ptr %179, align 4
  %180 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %96, ptr %180, align 4
  %181 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %182 = load ptr, ptr %181, align 8
  call void %182(ptr %22, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %4)
  br label %join18

join18:                                           ; preds = %then17, %then15
  %183 = mul i64 %122, %27
  %184 = add i64 0, %183
  %185 = mul i64 %96, %31
  %186 = add i64 %184, %185
  %187 = getelementptr float, ptr %data1, i64 %186
  %188 = select i1 %165, ptr %187, ptr %4
  %189 = select i1 %165, i64 %27, i64 64
  br label %loop19

loop19:                                           ; preds = %loop.exit25, %join18
  %i22 = phi i64 [ 0, %join18 ], [ %204, %loop.exit25 ]
  %190 = icmp slt i64 %i22, 64
  br i1 %190, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  br label %loop23

loop.exit21:                                      ; preds = %loop19
  %191 = load i1, ptr %7, align 1
  br i1 %191, label %then27, label %join28

loop23:                                           ; preds = %loop.body24, %loop.body20
  %i26 = phi i64 [ 0, %loop.body20 ], [ %203, %loop.body24 ]
  %192 = icmp slt i64 %i26, 64
  br i1 %192, label %loop.body24, label %loop.exit25

loop.body24:                                      ; preds = %loop23
  %193 = mul i64 %i22, %189
  %194 = add i64 0, %193
  %195 = mul i64 %i26, 1
  %196 = add i64 %194, %195
  %197 = getelementptr inbounds float, ptr %188, i64 %196
  %198 = load float, ptr %197, align 4
  %199 = add i64 0, %i22
  %200 = mul i64 %199, 64
  %201 = add i64 %200, %i26
  %202 = getelementptr inbounds float, ptr %150, i64 %201
  store float %198, ptr %202, align 4
  %203 = add nuw nsw i64 %i26, 1
  br label %loop23, !llvm.loop !0

loop.exit25:                                      ; preds = %loop23
  %204 = add nuw nsw i64 %i22, 1
  br label %loop19

then27:                                           ; preds = %loop.exit21
  store atomic i32 2, ptr %144 release, align 4
  br label %join28

join28:                                           ; preds = %then27, %loop.exit21
  br label %join16

then29:                                           ; preds = %join16
  %205 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %97, ptr %205, align 4
  %206 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %122, ptr %206, align 4
  %207 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %208 = load ptr, ptr %207, align 8
  call void %208(ptr %12, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, i64 0, ptr %3)
  br label %join30

join30:                                           ; preds = %then29, %join16
  %209 = mul i64 %97, %17
  %210 = add i64 0, %209
  %211 = mul i64 %122, %21
  %212 = add i64 %210, %211
  %213 = getelementptr float, ptr %data, i64 %212
  %214 = select i1 %177, ptr %213, ptr %3
  %215 = select i1 %177, i64 %17, i64 64
  %216 = select i1 %121, ptr %114, ptr %10
  %217 = select i1 %121, i64 %115, i64 64
  call void @tj_dot_0(ptr %214, i64 %215, ptr %150, ptr %10, ptr %216, i64 %217, i1 %119)
  %218 = add nuw nsw i64 %i10, 1
  br label %loop7

then31:                                           ; preds = %loop.exit9
  br label %loop33

join32:                                           ; preds = %loop.exit35, %loop.exit9
  %219 = xor i1 %108, true
  br i1 %219, label %then37, label %join38

loop33:                                           ; preds = %loop.body34, %then31
  %i36 = phi i64 [ 0, %then31 ], [ %225, %loop.body34 ]
  %220 = icmp slt i64 %i36, 128
  br i1 %220, label %loop.body34, label %loop.exit35

loop.body34:                                      ; preds = %loop33
  %221 = mul i64 %i36, %115
  %222 = add i64 0, %221
  %223 = add i64 %222, 0
  %224 = getelementptr inbounds float, ptr %114, i64 %223
  call void @llvm.memset.p0.i64(ptr align 4 %224, i8 0, i64 256, i1 false)
  %225 = add nuw nsw i64 %i36, 1
  br label %loop33

loop.exit35:                                      ; preds = %loop33
  br label %join32

then37:                                           ; preds = %join32
  %226 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %97, ptr %226, align 4
  %227 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %96, ptr %227, align 4
  %228 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %229 = load ptr, ptr %228, align 8
  call void %229(ptr %32, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, ptr %9)
  br label %join38

join38:                                           ; preds = %then37, %join32
  %230 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: noinline nounwind
define internal void @tj_dot_0(ptr %0, i64 %1, ptr noalias %2, ptr %3, ptr %4, i64 %5, i1 %6) #1 {
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
declare <8 x float> @llvm.fmuladd.v8f32(<8 x float>, <8 x float>, <8 x float>) #2

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: write)
declare void @llvm.memset.p0.i64(ptr nocapture writeonly, i8, i64, i1 immarg) #3

attributes #0 = { nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #1 = { noinline nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { nocallback nofree nounwind willreturn memory(argmem: write) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
!2 = distinct !{!2, !3}
!3 = !{!"llvm.loop.unroll.count", i32 2}
!4 = distinct !{!4, !3}
