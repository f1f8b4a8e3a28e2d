; ModuleID = 'tilejit.softmax'
source_filename = "tilejit.softmax"

@block_shape = private constant [2 x i64] [i64 2, i64 32]

; Function Attrs: nounwind
define void @tj_kernel(ptr %0, i64 %1, i64 %2) #0 {
entry:
  %3 = alloca float, i64 64, align 64
  %4 = alloca float, align 4
  %5 = alloca i64, align 8
  %6 = alloca float, i64 2, align 64
  %7 = alloca float, i64 64, align 64
  %8 = alloca i32, align 4
  %9 = alloca float, align 4
  %10 = alloca i64, align 8
  %11 = alloca float, i64 2, align 64
  %block_firsts = alloca [4 x i64], align 8
  %12 = alloca float, i64 64, align 64
  %13 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %13, align 8
  %14 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %15 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %14, i32 0, i32 0
  %data = load ptr, ptr %15, align 8
  %16 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %14, i32 0, i32 1, i32 0
  %17 = load i64, ptr %16, align 4
  %18 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %14, i32 0, i32 2, i32 0
  %19 = load i64, ptr %18, align 4
  %20 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %14, i32 0, i32 1, i32 1
  %21 = load i64, ptr %20, align 4
  %22 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %14, i32 0, i32 2, i32 1
  %23 = load i64, ptr %22, align 4
  %24 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %25 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %24, i32 0, i32 0
  %data1 = load ptr, ptr %25, align 8
  %26 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %24, i32 0, i32 1, i32 0
  %27 = load i64, ptr %26, align 4
  %28 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %24, i32 0, i32 2, i32 0
  %29 = load i64, ptr %28, align 4
  %30 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %24, i32 0, i32 1, i32 1
  %31 = load i64, ptr %30, align 4
  %32 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %24, i32 0, i32 2, i32 1
  %33 = load i64, ptr %32, align 4
  %34 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %35 = load i64, ptr %34, align 4
  %program_id = alloca [3 x i64], align 8
  br label %loop

loop:                                             ; preds = %join41, %entry
  %i = phi i64 [ %1, %entry ], [ %207, %join41 ]
  %36 = icmp slt i64 %i, %2
  br i1 %36, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %37 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %i, ptr %37, align 4
  %38 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 0, ptr %38, align 4
  %39 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %39, align 4
  %40 = mul i64 %i, 2
  %41 = icmp eq i64 %23, 1
  %42 = add i64 %40, 2
  %43 = icmp sle i64 %42, %17
  %44 = icmp sge i64 %40, 0
  %45 = and i1 %44, %43
  %46 = and i1 %41, %45
  %47 = icmp sle i64 32, %21
  %48 = and i1 true, %47
  %49 = and i1 %46, %48
  %50 = xor i1 %49, true
  br i1 %50, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %51 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %40, ptr %51, align 4
  %52 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %52, align 4
  %53 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %54 = load ptr, ptr %53, align 8
  call void %54(ptr %14, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 4286578688, ptr %12)
  br label %join

join:                                             ; preds = %then, %loop.body
  %55 = mul i64 %40, %19
  %56 = add i64 0, %55
  %57 = mul i64 0, %23
  %58 = add i64 %56, %57
  %59 = getelementptr float, ptr %data, i64 %58
  %60 = select i1 %49, ptr %59, ptr %12
  %61 = select i1 %49, i64 %19, i64 32
  br label %loop2

loop2:                                            ; preds = %join11, %join
  %i5 = phi i64 [ 0, %join ], [ %87, %join11 ]
  %62 = icmp slt i64 %i5, 2
  br i1 %62, label %loop.body3, label %loop.exit4

loop.body3:                                       ; preds = %loop2
  store i32 0, ptr %8, align 4
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop6

loop.exit4:                                       ; preds = %loop2
  br label %loop16

loop6:                                            ; preds = %loop.body7, %loop.body3
  %i9 = phi i64 [ 0, %loop.body3 ], [ %76, %loop.body7 ]
  %63 = icmp slt i64 %i9, 32
  br i1 %63, label %loop.body7, label %loop.exit8

loop.body7:                                       ; preds = %loop6
  %64 = mul i64 %i5, %61
  %65 = add i64 0, %64
  %66 = mul i64 %i9, 1
  %67 = add i64 %65, %66
  %68 = getelementptr inbounds float, ptr %60, i64 %67
  %69 = load float, ptr %68, align 4
  %70 = load float, ptr %9, align 4
  %71 = call nnan nsz float @llvm.maxnum.f32(float %70, float %69)
  %72 = bitcast float %69 to i32
  %73 = and i32 %72, 2147483647
  %74 = load i32, ptr %8, align 4
  %75 = call i32 @llvm.umax.i32(i32 %74, i32 %73)
  store i32 %75, ptr %8, align 4
  store float %71, ptr %9, align 4
  %76 = add nuw nsw i64 %i9, 1
  br label %loop6

loop.exit8:                                       ; preds = %loop6
  %77 = load i32, ptr %8, align 4
  %78 = icmp ugt i32 %77, 2139095040
  %79 = load float, ptr %9, align 4
  %80 = fcmp oeq float %79, 0.000000e+00
  %81 = xor i1 %78, true
  %82 = select i1 %81, i1 %80, i1 false
  br i1 %82, label %then10, label %join11

then10:                                           ; preds = %loop.exit8
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop12

join11:                                           ; preds = %loop.exit14, %loop.exit8
  %83 = load float, ptr %9, align 4
  %84 = select i1 %78, float 0x7FF8000000000000, float %83
  %85 = add i64 0, %i5
  %86 = getelementptr inbounds float, ptr %11, i64 %85
  store float %84, ptr %86, align 4
  %87 = add nuw nsw i64 %i5, 1
  br label %loop2, !llvm.loop !0

loop12:                                           ; preds = %loop.body13, %then10
  %i15 = phi i64 [ 0, %then10 ], [ %97, %loop.body13 ]
  %88 = icmp slt i64 %i15, 32
  br i1 %88, label %loop.body13, label %loop.exit14

loop.body13:                                      ; preds = %loop12
  %89 = mul i64 %i5, %61
  %90 = add i64 0, %89
  %91 = mul i64 %i15, 1
  %92 = add i64 %90, %91
  %93 = getelementptr inbounds float, ptr %60, i64 %92
  %94 = load float, ptr %93, align 4
  %95 = load float, ptr %9, align 4
  %96 = call float @llvm.maximum.f32(float %95, float %94)
  store float %96, ptr %9, align 4
  %97 = add nuw nsw i64 %i15, 1
  br label %loop12

loop.exit14:                                      ; preds = %loop12
  br label %join11

loop16:                                           ; preds = %loop.exit22, %loop.exit4
  %i19 = phi i64 [ 0, %loop.exit4 ], [ %148, %loop.exit22 ]
  %98 = icmp slt i64 %i19, 2
  br i1 %98, label %loop.body17, label %loop.exit18

loop.body17:                                      ; preds = %loop16
  br label %loop20

loop.exit18:                                      ; preds = %loop16
  br label %loop24

loop20:                                           ; preds = %loop.body21, %loop.body17
  %i23 = phi i64 [ 0, %loop.body17 ], [ %147, %loop.body21 ]
  %99 = icmp slt i64 %i23, 32
  br i1 %99, label %loop.body21, label %loop.exit22

loop.body21:                                      ; preds = %loop20
  %100 = mul i64 %i19, %61
  %101 = add i64 0, %100
  %102 = mul i64 %i23, 1
  %103 = add i64 %101, %102
  %104 = getelementptr inbounds float, ptr %60, i64 %103
  %105 = load float, ptr %104, align 4
  %106 = add i64 0, %i19
  %107 = mul i64 %106, 1
  %108 = add i64 %107, 0
  %109 = urem i64 %108, 2
  %110 = udiv i64 %108, 2
  %111 = add i64 0, %109
  %112 = getelementptr inbounds float, ptr %11, i64 %111
  %113 = load float, ptr %112, align 4
  %114 = fsub float %105, %113
  %115 = fcmp olt float %114, -1.100000e+02
  %116 = select i1 %115, float -1.100000e+02, float %114
  %117 = fcmp ogt float %116, 9.000000e+01
  %118 = select i1 %117, float 9.000000e+01, float %116
  %119 = call float @llvm.fmuladd.f32(float %118, float 0x3FF7154760000000, float 0x4168000000000000)
  %120 = fsub float %119, 0x4168000000000000
  %121 = call float @llvm.fmuladd.f32(float %120, float 0xBFE6300000000000, float %118)
  %122 = call float @llvm.fmuladd.f32(float %120, float 0x3F2BD01060000000, float %121)
  %123 = bitcast float %119 to i32
  %124 = sub i32 %123, 1262485504
  %125 = call float @llvm.fmuladd.f32(float 0x3F2A0D2CE0000000, float %122, float 0x3F56E879C0000000)
  %126 = call float @llvm.fmuladd.f32(float %125, float %122, float 0x3F81112100000000)
  %127 = call float @llvm.fmuladd.f32(float %126, float %122, float 0x3FA5553820000000)
  %128 = call float @llvm.fmuladd.f32(float %127, float %122, float 0x3FC5555540000000)
  %129 = call float @llvm.fmuladd.f32(float %128, float %122, float 5.000000e-01)
  %130 = fmul float %122, %122
  %131 = call float @llvm.fmuladd.f32(float %129, float %130, float %122)
  %132 = fadd float %131, 1.000000e+00
  %133 = ashr i32 %124, 1
  %134 = sub i32 %124, %133
  %135 = add i32 %134, 127
  %136 = shl i32 %135, 23
  %137 = bitcast i32 %136 to float
  %138 = add i32 %133, 127
  %139 = shl i32 %138, 23
  %140 = bitcast i32 %139 to float
  %141 = fmul float %132, %140
  %142 = fmul float %141, %137
  %143 = add i64 0, %i19
  %144 = mul i64 %143, 32
  %145 = add i64 %144, %i23
  %146 = getelementptr inbounds float, ptr %7, i64 %145
  store float %142, ptr %146, align 4
  %147 = add nuw nsw i64 %i23, 1
  br label %loop20, !llvm.loop !2

loop.exit22:                                      ; preds = %loop20
  %148 = add nuw nsw i64 %i19, 1
  br label %loop16

loop24:                                           ; preds = %loop.exit30, %loop.exit18
  %i27 = phi i64 [ 0, %loop.exit18 ], [ %178, %loop.exit30 ]
  %149 = icmp slt i64 %i27, 2
  br i1 %149, label %loop.body25, label %loop.exit26

loop.body25:                                      ; preds = %loop24
  store float -0.000000e+00, ptr %4, align 4
  store i64 0, ptr %5, align 4
  br label %loop28

loop.exit26:                                      ; preds = %loop24
  %150 = icmp eq i64 %33, 1
  %151 = add i64 %40, 2
  %152 = icmp sle i64 %151, %27
  %153 = icmp sge i64 %40, 0
  %154 = and i1 %153, %152
  %155 = and i1 %150, %154
  %156 = icmp sle i64 32, %31
  %157 = and i1 true, %156
  %158 = and i1 %155, %157
  %159 = mul i64 %40, %29
  %160 = add i64 0, %159
  %161 = mul i64 0, %33
  %162 = add i64 %160, %161
  %163 = getelementptr float, ptr %data1, i64 %162
  %164 = select i1 %158, ptr %163, ptr %3
  %165 = select i1 %158, i64 %29, i64 32
  br label %loop32

loop28:                                           ; preds = %loop.body29, %loop.body25
  %i31 = phi i64 [ 0, %loop.body25 ], [ %174, %loop.body29 ]
  %166 = icmp slt i64 %i31, 32
  br i1 %166, label %loop.body29, label %loop.exit30

loop.body29:                                      ; preds = %loop28
  %167 = add i64 0, %i27
  %168 = mul i64 %167, 32
  %169 = add i64 %168, %i31
  %170 = getelementptr inbounds float, ptr %7, i64 %169
  %171 = load float, ptr %170, align 4
  %172 = load float, ptr %4, align 4
  %173 = fadd reassoc float %172, %171
  store float %173, ptr %4, align 4
  %174 = add nuw nsw i64 %i31, 1
  br label %loop28

loop.exit30:                                      ; preds = %loop28
  %175 = load float, ptr %4, align 4
  %176 = add i64 0, %i27
  %177 = getelementptr inbounds float, ptr %6, i64 %176
  store float %175, ptr %177, align 4
  %178 = add nuw nsw i64 %i27, 1
  br label %loop24, !llvm.loop !4

loop32:                                           ; preds = %loop.exit38, %loop.exit26
  %i35 = phi i64 [ 0, %loop.exit26 ], [ %202, %loop.exit38 ]
  %179 = icmp slt i64 %i35, 2
  br i1 %179, label %loop.body33, label %loop.exit34

loop.body33:                                      ; preds = %loop32
  br label %loop36

loop.exit34:                                      ; preds = %loop32
  %180 = xor i1 %158, true
  br i1 %180, label %then40, label %join41

loop36:                                           ; preds = %loop.body37, %loop.body33
  %i39 = phi i64 [ 0, %loop.body33 ], [ %201, %loop.body37 ]
  %181 = icmp slt i64 %i39, 32
  br i1 %181, label %loop.body37, label %loop.exit38

loop.body37:                                      ; preds = %loop36
  %182 = mul i64 %i35, %165
  %183 = add i64 0, %182
  %184 = mul i64 %i39, 1
  %185 = add i64 %183, %184
  %186 = getelementptr inbounds float, ptr %164, i64 %185
  %187 = add i64 0, %i35
  %188 = mul i64 %187, 32
  %189 = add i64 %188, %i39
  %190 = getelementptr inbounds float, ptr %7, i64 %189
  %191 = load float, ptr %190, align 4
  %192 = add i64 0, %i35
  %193 = mul i64 %192, 1
  %194 = add i64 %193, 0
  %195 = urem i64 %194, 2
  %196 = udiv i64 %194, 2
  %197 = add i64 0, %195
  %198 = getelementptr inbounds float, ptr %6, i64 %197
  %199 = load float, ptr %198, align 4
  %200 = fdiv float %191, %199
  store float %200, ptr %186, align 4
  %201 = add nuw nsw i64 %i39, 1
  br label %loop36, !llvm.loop !5

loop.exit38:                                      ; preds = %loop36
  %202 = add nuw nsw i64 %i35, 1
  br label %loop32

then40:                                           ; preds = %loop.exit34
  %203 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %40, ptr %203, align 4
  %204 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %204, align 4
  %205 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %206 = load ptr, ptr %205, align 8
  call void %206(ptr %24, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, ptr %3)
  br label %join41

join41:                                           ; preds = %then40, %loop.exit34
  %207 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maxnum.f32(float, float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.umax.i32(i32, i32) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maximum.f32(float, float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fmuladd.f32(float, float, float) #1

attributes #0 = { nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 1}
!2 = distinct !{!2, !3}
!3 = !{!"llvm.loop.interleave.count", i32 4}
!4 = distinct !{!4, !1}
!5 = distinct !{!5, !3}
