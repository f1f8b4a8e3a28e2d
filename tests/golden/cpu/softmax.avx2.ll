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
  %36 = sub i64 %2, %1
  br label %loop

loop:                                             ; preds = %join41, %entry
  %i = phi i64 [ 0, %entry ], [ %213, %join41 ]
  %37 = icmp slt i64 %i, %36
  br i1 %37, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %38 = add i64 %i, 0
  %39 = sub i64 %38, %36
  %40 = icmp sge i64 %38, %36
  %41 = select i1 %40, i64 %39, i64 %38
  %42 = add i64 %1, %41
  %43 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %42, ptr %43, align 4
  %44 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 0, ptr %44, align 4
  %45 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %45, align 4
  %46 = mul i64 %42, 2
  %47 = icmp eq i64 %23, 1
  %48 = add i64 %46, 2
  %49 = icmp sle i64 %48, %17
  %50 = icmp sge i64 %46, 0
  %51 = and i1 %50, %49
  %52 = and i1 %47, %51
  %53 = icmp sle i64 32, %21
  %54 = and i1 true, %53
  %55 = and i1 %52, %54
  %56 = xor i1 %55, true
  br i1 %56, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %57 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %46, ptr %57, align 4
  %58 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %58, align 4
  %59 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %60 = load ptr, ptr %59, align 8
  call void %60(ptr %14, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 4286578688, ptr %12)
  br label %join

join:                                             ; preds = %then, %loop.body
  %61 = mul i64 %46, %19
  %62 = add i64 0, %61
  %63 = mul i64 0, %23
  %64 = add i64 %62, %63
  %65 = getelementptr float, ptr %data, i64 %64
  %66 = select i1 %55, ptr %65, ptr %12
  %67 = select i1 %55, i64 %19, i64 32
  br label %loop2

loop2:                                            ; preds = %join11, %join
  %i5 = phi i64 [ 0, %join ], [ %93, %join11 ]
  %68 = icmp slt i64 %i5, 2
  br i1 %68, label %loop.body3, label %loop.exit4

loop.body3:                                       ; preds = %loop2
  store i32 0, ptr %8, align 4
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop6

loop.exit4:                                       ; preds = %loop2
  br label %loop16

loop6:                                            ; preds = %loop.body7, %loop.body3
  %i9 = phi i64 [ 0, %loop.body3 ], [ %82, %loop.body7 ]
  %69 = icmp slt i64 %i9, 32
  br i1 %69, label %loop.body7, label %loop.exit8

loop.body7:                                       ; preds = %loop6
  %70 = mul i64 %i5, %67
  %71 = add i64 0, %70
  %72 = mul i64 %i9, 1
  %73 = add i64 %71, %72
  %74 = getelementptr inbounds float, ptr %66, i64 %73
  %75 = load float, ptr %74, align 4
  %76 = load float, ptr %9, align 4
  %77 = call nnan nsz float @llvm.maxnum.f32(float %76, float %75)
  %78 = bitcast float %75 to i32
  %79 = and i32 %78, 2147483647
  %80 = load i32, ptr %8, align 4
  %81 = call i32 @llvm.umax.i32(i32 %80, i32 %79)
  store i32 %81, ptr %8, align 4
  store float %77, ptr %9, align 4
  %82 = add nuw nsw i64 %i9, 1
  br label %loop6

loop.exit8:                                       ; preds = %loop6
  %83 = load i32, ptr %8, align 4
  %84 = icmp ugt i32 %83, 2139095040
  %85 = load float, ptr %9, align 4
  %86 = fcmp oeq float %85, 0.000000e+00
  %87 = xor i1 %84, true
  %88 = select i1 %87, i1 %86, i1 false
  br i1 %88, label %then10, label %join11

then10:                                           ; preds = %loop.exit8
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop12

join11:                                           ; preds = %loop.exit14, %loop.exit8
  %89 = load float, ptr %9, align 4
  %90 = select i1 %84, float 0x7FF8000000000000, float %89
  %91 = add i64 0, %i5
  %92 = getelementptr inbounds float, ptr %11, i64 %91
  store float %90, ptr %92, align 4
  %93 = add nuw nsw i64 %i5, 1
  br label %loop2, !llvm.loop !0

loop12:                                           ; preds = %loop.body13, %then10
  %i15 = phi i64 [ 0, %then10 ], [ %103, %loop.body13 ]
  %94 = icmp slt i64 %i15, 32
  br i1 %94, label %loop.body13, label %loop.exit14

loop.body13:                                      ; preds = %loop12
  %95 = mul i64 %i5, %67
  %96 = add i64 0, %95
  %97 = mul i64 %i15, 1
  %98 = add i64 %96, %97
  %99 = getelementptr inbounds float, ptr %66, i64 %98
  %100 = load float, ptr %99, align 4
  %101 = load float, ptr %9, align 4
  %102 = call float @llvm.maximum.f32(float %101, float %100)
  store float %102, ptr %9, align 4
  %103 = add nuw nsw i64 %i15, 1
  br label %loop12

loop.exit14:                                      ; preds = %loop12
  br label %join11

loop16:                                           ; preds = %loop.exit22, %loop.exit4
  %i19 = phi i64 [ 0, %loop.exit4 ], [ %154, %loop.exit22 ]
  %104 = icmp slt i64 %i19, 2
  br i1 %104, label %loop.body17, label %loop.exit18

loop.body17:                                      ; preds = %loop16
  br label %loop20

loop.exit18:                                      ; preds = %loop16
  br label %loop24

loop20:                                           ; preds = %loop.body21, %loop.body17
  %i23 = phi i64 [ 0, %loop.body17 ], [ %153, %loop.body21 ]
  %105 = icmp slt i64 %i23, 32
  br i1 %105, label %loop.body21, label %loop.exit22

loop.body21:                                      ; preds = %loop20
  %106 = mul i64 %i19, %67
  %107 = add i64 0, %106
  %108 = mul i64 %i23, 1
  %109 = add i64 %107, %108
  %110 = getelementptr inbounds float, ptr %66, i64 %109
  %111 = load float, ptr %110, align 4
  %112 = add i64 0, %i19
  %113 = mul i64 %112, 1
  %114 = add i64 %113, 0
  %115 = urem i64 %114, 2
  %116 = udiv i64 %114, 2
  %117 = add i64 0, %115
  %118 = getelementptr inbounds float, ptr %11, i64 %117
  %119 = load float, ptr %118, align 4
  %120 = fsub float %111, %119
  %121 = fcmp olt float %120, -1.100000e+02
  %122 = select i1 %121, float -1.100000e+02, float %120
  %123 = fcmp ogt float %122, 9.000000e+01
  %124 = select i1 %123, float 9.000000e+01, float %122
  %125 = call float @llvm.fmuladd.f32(float %124, float 0x3FF7154760000000, float 0x4168000000000000)
  %126 = fsub float %125, 0x4168000000000000
  %127 = call float @llvm.fmuladd.f32(float %126, float 0xBFE6300000000000, float %124)
  %128 = call float @llvm.fmuladd.f32(float %126, float 0x3F2BD01060000000, float %127)
  %129 = bitcast float %125 to i32
  %130 = sub i32 %129, 1262485504
  %131 = call float @llvm.fmuladd.f32(float 0x3F2A0D2CE0000000, float %128, float 0x3F56E879C0000000)
  %132 = call float @llvm.fmuladd.f32(float %131, float %128, float 0x3F81112100000000)
  %133 = call float @llvm.fmuladd.f32(float %132, float %128, float 0x3FA5553820000000)
  %134 = call float @llvm.fmuladd.f32(float %133, float %128, float 0x3FC5555540000000)
  %135 = call float @llvm.fmuladd.f32(float %134, float %128, float 5.000000e-01)
  %136 = fmul float %128, %128
  %137 = call float @llvm.fmuladd.f32(float %135, float %136, float %128)
  %138 = fadd float %137, 1.000000e+00
  %139 = ashr i32 %130, 1
  %140 = sub i32 %130, %139
  %141 = add i32 %140, 127
  %142 = shl i32 %141, 23
  %143 = bitcast i32 %142 to float
  %144 = add i32 %139, 127
  %145 = shl i32 %144, 23
  %146 = bitcast i32 %145 to float
  %147 = fmul float %138, %146
  %148 = fmul float %147, %143
  %149 = add i64 0, %i19
  %150 = mul i64 %149, 32
  %151 = add i64 %150, %i23
  %152 = getelementptr inbounds float, ptr %7, i64 %151
  store float %148, ptr %152, align 4
  %153 = add nuw nsw i64 %i23, 1
  br label %loop20, !llvm.loop !2

loop.exit22:                                      ; preds = %loop20
  %154 = add nuw nsw i64 %i19, 1
  br label %loop16

loop24:                                           ; preds = %loop.exit30, %loop.exit18
  %i27 = phi i64 [ 0, %loop.exit18 ], [ %184, %loop.exit30 ]
  %155 = icmp slt i64 %i27, 2
  br i1 %155, label %loop.body25, label %loop.exit26

loop.body25:                                      ; preds = %loop24
  store float -0.000000e+00, ptr %4, align 4
  store i64 0, ptr %5, align 4
  br label %loop28

loop.exit26:                                      ; preds = %loop24
  %156 = icmp eq i64 %33, 1
  %157 = add i64 %46, 2
  %158 = icmp sle i64 %157, %27
  %159 = icmp sge i64 %46, 0
  %160 = and i1 %159, %158
  %161 = and i1 %156, %160
  %162 = icmp sle i64 32, %31
  %163 = and i1 true, %162
  %164 = and i1 %161, %163
  %165 = mul i64 %46, %29
  %166 = add i64 0, %165
  %167 = mul i64 0, %33
  %168 = add i64 %166, %167
  %169 = getelementptr float, ptr %data1, i64 %168
  %170 = select i1 %164, ptr %169, ptr %3
  %171 = select i1 %164, i64 %29, i64 32
  br label %loop32

loop28:                                           ; preds = %loop.body29, %loop.body25
  %i31 = phi i64 [ 0, %loop.body25 ], [ %180, %loop.body29 ]
  %172 = icmp slt i64 %i31, 32
  br i1 %172, label %loop.body29, label %loop.exit30

loop.body29:                                      ; preds = %loop28
  %173 = add i64 0, %i27
  %174 = mul i64 %173, 32
  %175 = add i64 %174, %i31
  %176 = getelementptr inbounds float, ptr %7, i64 %175
  %177 = load float, ptr %176, align 4
  %178 = load float, ptr %4, align 4
  %179 = fadd reassoc float %178, %177
  store float %179, ptr %4, align 4
  %180 = add nuw nsw i64 %i31, 1
  br label %loop28

loop.exit30:                                      ; preds = %loop28
  %181 = load float, ptr %4, align 4
  %182 = add i64 0, %i27
  %183 = getelementptr inbounds float, ptr %6, i64 %182
  store float %181, ptr %183, align 4
  %184 = add nuw nsw i64 %i27, 1
  br label %loop24, !llvm.loop !4

loop32:                                           ; preds = %loop.exit38, %loop.exit26
  %i35 = phi i64 [ 0, %loop.exit26 ], [ %208, %loop.exit38 ]
  %185 = icmp slt i64 %i35, 2
  br i1 %185, label %loop.body33, label %loop.exit34

loop.body33:                                      ; preds = %loop32
  br label %loop36

loop.exit34:                                      ; preds = %loop32
  %186 = xor i1 %164, true
  br i1 %186, label %then40, label %join41

loop36:                                           ; preds = %loop.body37, %loop.body33
  %i39 = phi i64 [ 0, %loop.body33 ], [ %207, %loop.body37 ]
  %187 = icmp slt i64 %i39, 32
  br i1 %187, label %loop.body37, label %loop.exit38

loop.body37:                                      ; preds = %loop36
  %188 = mul i64 %i35, %171
  %189 = add i64 0, %188
  %190 = mul i64 %i39, 1
  %191 = add i64 %189, %190
  %192 = getelementptr inbounds float, ptr %170, i64 %191
  %193 = add i64 0, %i35
  %194 = mul i64 %193, 32
  %195 = add i64 %194, %i39
  %196 = getelementptr inbounds float, ptr %7, i64 %195
  %197 = load float, ptr %196, align 4
  %198 = add i64 0, %i35
  %199 = mul i64 %198, 1
  %200 = add i64 %199, 0
  %201 = urem i64 %200, 2
  %202 = udiv i64 %200, 2
  %203 = add i64 0, %201
  %204 = getelementptr inbounds float, ptr %6, i64 %203
  %205 = load float, ptr %204, align 4
  %206 = fdiv float %197, %205
  store float %206, ptr %192, align 4
  %207 = add nuw nsw i64 %i39, 1
  br label %loop36, !llvm.loop !5

loop.exit38:                                      ; preds = %loop36
  %208 = add nuw nsw i64 %i35, 1
  br label %loop32

then40:                                           ; preds = %loop.exit34
  %209 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %46, ptr %209, align 4
  %210 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %210, align 4
  %211 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %212 = load ptr, ptr %211, align 8
  call void %212(ptr %24, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, ptr %3)
  br label %join41

join41:                                           ; preds = %then40, %loop.exit34
  %213 = add nuw nsw i64 %i, 1
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
