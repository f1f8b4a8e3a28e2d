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
  %8 = alloca float, i64 64, align 64
  %9 = alloca i32, align 4
  %block_firsts = alloca [4 x i64], align 8
  %10 = alloca float, i64 64, align 64
  %11 = alloca float, align 4
  %12 = alloca i64, align 8
  %13 = alloca float, i64 2, align 64
  %14 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %14, align 8
  %15 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %16 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 0
  %data = load ptr, ptr %16, align 8
  %17 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 1, i32 0
  %18 = load i64, ptr %17, align 4
  %19 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 2, i32 0
  %20 = load i64, ptr %19, align 4
  %21 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 1, i32 1
  %22 = load i64, ptr %21, align 4
  %23 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 2, i32 1
  %24 = load i64, ptr %23, align 4
  %25 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %26 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 0
  %data1 = load ptr, ptr %26, align 8
  %27 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 1, i32 0
  %28 = load i64, ptr %27, align 4
  %29 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 2, i32 0
  %30 = load i64, ptr %29, align 4
  %31 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 1, i32 1
  %32 = load i64, ptr %31, align 4
  %33 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 2, i32 1
  %34 = load i64, ptr %33, align 4
  %35 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %36 = load i64, ptr %35, align 4
  %program_id = alloca [3 x i64], align 8
  br label %loop

loop:                                             ; preds = %join43, %entry
  %i = phi i64 [ %1, %entry ], [ %229, %join43 ]
  %37 = icmp slt i64 %i, %2
  br i1 %37, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %38 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %i, ptr %38, align 4
  %39 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 0, ptr %39, align 4
  %40 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %40, align 4
  %41 = mul i64 %i, 2
  %42 = icmp eq i64 %24, 1
  %43 = add i64 %41, 2
  %44 = icmp sle i64 %43, %18
  %45 = icmp sge i64 %41, 0
  %46 = and i1 %45, %44
  %47 = and i1 %42, %46
  %48 = icmp sle i64 32, %22
  %49 = and i1 true, %48
  %50 = and i1 %47, %49
  %51 = xor i1 %50, true
  br i1 %51, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %52 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %41, ptr %52, align 4
  %53 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %53, align 4
  %54 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %55 = load ptr, ptr %54, align 8
  call void %55(ptr %15, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 4286578688, ptr %10)
  br label %join

join:                                             ; preds = %then, %loop.body
  %56 = mul i64 %41, %20
  %57 = add i64 0, %56
  %58 = mul i64 0, %24
  %59 = add i64 %57, %58
  %60 = getelementptr float, ptr %data, i64 %59
  %61 = select i1 %50, ptr %60, ptr %10
  %62 = select i1 %50, i64 %20, i64 32
  br label %loop2

loop2:                                            ; preds = %join11, %join
  %i5 = phi i64 [ 0, %join ], [ %98, %join11 ]
  %63 = icmp slt i64 %i5, 2
  br i1 %63, label %loop.body3, label %loop.exit4

loop.body3:                                       ; preds = %loop2
  store i32 0, ptr %9, align 4
  store float 0xFFF0000000000000, ptr %11, align 4
  br label %loop6

loop.exit4:                                       ; preds = %loop2
  %64 = icmp eq i64 %24, 1
  %65 = add i64 %41, 2
  %66 = icmp sle i64 %65, %18
  %67 = icmp sge i64 %41, 0
  %68 = and i1 %67, %66
  %69 = and i1 %64, %68
  %70 = icmp sle i64 32, %22
  %71 = and i1 true, %70
  %72 = and i1 %69, %71
  %73 = xor i1 %72, true
  br i1 %73, label %then16, label %join17

loop6:                                            ; preds = %loop.body7, %loop.body3
  %i9 = phi i64 [ 0, %loop.body3 ], [ %87, %loop.body7 ]
  %74 = icmp slt i64 %i9, 32
  br i1 %74, label %loop.body7, label %loop.exit8

loop.body7:                                       ; preds = %loop6
  %75 = mul i64 %i5, %62
  %76 = add i64 0, %75
  %77 = mul i64 %i9, 1
  %78 = add i64 %76, %77
  %79 = getelementptr inbounds float, ptr %61, i64 %78
  %80 = load float, ptr %79, align 4
  %81 = load float, ptr %11, align 4
  %82 = call nnan nsz float @llvm.maxnum.f32(float %81, float %80)
  %83 = bitcast float %80 to i32
  %84 = and i32 %83, 2147483647
  %85 = load i32, ptr %9, align 4
  %86 = call i32 @llvm.umax.i32(i32 %85, i32 %84)
  store i32 %86, ptr %9, align 4
  store float %82, ptr %11, align 4
  %87 = add nuw nsw i64 %i9, 1
  br label %loop6

loop.exit8:                                       ; preds = %loop6
  %88 = load i32, ptr %9, align 4
  %89 = icmp ugt i32 %88, 2139095040
  %90 = load float, ptr %11, align 4
  %91 = fcmp oeq float %90, 0.000000e+00
  %92 = xor i1 %89, true
  %93 = select i1 %92, i1 %91, i1 false
  br i1 %93, label %then10, label %join11

then10:                                           ; preds = %loop.exit8
  store float 0xFFF0000000000000, ptr %11, align 4
  br label %loop12

join11:                                           ; preds = %loop.exit14, %loop.exit8
  %94 = load float, ptr %11, align 4
  %95 = select i1 %89, float 0x7FF8000000000000, float %94
  %96 = add i64 0, %i5
  %97 = getelementptr inbounds float, ptr %13, i64 %96
  store float %95, ptr %97, align 4
  %98 = add nuw nsw i64 %i5, 1
  br label %loop2, !llvm.loop !0

loop12:                                           ; preds = %loop.body13, %then10
  %i15 = phi i64 [ 0, %then10 ], [ %108, %loop.body13 ]
  %99 = icmp slt i64 %i15, 32
  br i1 %99, label %loop.body13, label %loop.exit14

loop.body13:                                      ; preds = %loop12
  %100 = mul i64 %i5, %62
  %101 = add i64 0, %100
  %102 = mul i64 %i15, 1
  %103 = add i64 %101, %102
  %104 = getelementptr inbounds float, ptr %61, i64 %103
  %105 = load float, ptr %104, align 4
  %106 = load float, ptr %11, align 4
  %107 = call float @llvm.maximum.f32(float %106, float %105)
  store float %107, ptr %11, align 4
  %108 = add nuw nsw i64 %i15, 1
  br label %loop12

loop.exit14:                                      ; preds = %loop12
  br label %join11

then16:                                           ; preds = %loop.exit4
  %109 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %41, ptr %109, align 4
  %110 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %110, align 4
  %111 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %112 = load ptr, ptr %111, align 8
  call void %112(ptr %15, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 4286578688, ptr %7)
  br label %join17

join17:                                           ; preds = %then16, %loop.exit4
  %113 = mul i64 %41, %20
  %114 = add i64 0, %113
  %115 = mul i64 0, %24
  %116 = add i64 %114, %115
  %117 = getelementptr float, ptr %data, i64 %116
  %118 = select i1 %72, ptr %117, ptr %7
  %119 = select i1 %72, i64 %20, i64 32
  br label %loop18

loop18:                                           ; preds = %loop.exit24, %join17
  %i21 = phi i64 [ 0, %join17 ], [ %170, %loop.exit24 ]
  %120 = icmp slt i64 %i21, 2
  br i1 %120, label %loop.body19, label %loop.exit20

loop.body19:                                      ; preds = %loop18
  br label %loop22

loop.exit20:                                      ; preds = %loop18
  br label %loop26

loop22:                                           ; preds = %loop.body23, %loop.body19
  %i25 = phi i64 [ 0, %loop.body19 ], [ %169, %loop.body23 ]
  %121 = icmp slt i64 %i25, 32
  br i1 %121, label %loop.body23, label %loop.exit24

loop.body23:                                      ; preds = %loop22
  %122 = mul i64 %i21, %119
  %123 = add i64 0, %122
  %124 = mul i64 %i25, 1
  %125 = add i64 %123, %124
  %126 = getelementptr inbounds float, ptr %118, i64 %125
  %127 = load float, ptr %126, align 4
  %128 = add i64 0, %i21
  %129 = mul i64 %128, 1
  %130 = add i64 %129, 0
  %131 = urem i64 %130, 2
  %132 = udiv i64 %130, 2
  %133 = add i64 0, %131
  %134 = getelementptr inbounds float, ptr %13, i64 %133
  %135 = load float, ptr %134, align 4
  %136 = fsub float %127, %135
  %137 = fcmp olt float %136, -1.100000e+02
  %138 = select i1 %137, float -1.100000e+02, float %136
  %139 = fcmp ogt float %138, 9.000000e+01
  %140 = select i1 %139, float 9.000000e+01, float %138
  %141 = call float @llvm.fmuladd.f32(float %140, float 0x3FF7154760000000, float 0x4168000000000000)
  %142 = fsub float %141, 0x4168000000000000
  %143 = call float @llvm.fmuladd.f32(float %142, float 0xBFE6300000000000, float %140)
  %144 = call float @llvm.fmuladd.f32(float %142, float 0x3F2BD01060000000, float %143)
  %145 = bitcast float %141 to i32
  %146 = sub i32 %145, 1262485504
  %147 = call float @llvm.fmuladd.f32(float 0x3F2A0D2CE0000000, float %144, float 0x3F56E879C0000000)
  %148 = call float @llvm.fmuladd.f32(float %147, float %144, float 0x3F81112100000000)
  %149 = call float @llvm.fmuladd.f32(float %148, float %144, float 0x3FA5553820000000)
  %150 = call float @llvm.fmuladd.f32(float %149, float %144, float 0x3FC5555540000000)
  %151 = call float @llvm.fmuladd.f32(float %150, float %144, float 5.000000e-01)
  %152 = fmul float %144, %144
  %153 = call float @llvm.fmuladd.f32(float %151, float %152, float %144)
  %154 = fadd float %153, 1.000000e+00
  %155 = ashr i32 %146, 1
  %156 = sub i32 %146, %155
  %157 = add i32 %156, 127
  %158 = shl i32 %157, 23
  %159 = bitcast i32 %158 to float
  %160 = add i32 %155, 127
  %161 = shl i32 %160, 23
  %162 = bitcast i32 %161 to float
  %163 = fmul float %154, %162
  %164 = fmul float %163, %159
  %165 = add i64 0, %i21
  %166 = mul i64 %165, 32
  %167 = add i64 %166, %i25
  %168 = getelementptr inbounds float, ptr %8, i64 %167
  store float %164, ptr %168, align 4
  %169 = add nuw nsw i64 %i25, 1
  br label %loop22, !llvm.loop !2

loop.exit24:                                      ; preds = %loop22
  %170 = add nuw nsw i64 %i21, 1
  br label %loop18

loop26:                                           ; preds = %loop.exit32, %loop.exit20
  %i29 = phi i64 [ 0, %loop.exit20 ], [ %200, %loop.exit32 ]
  %171 = icmp slt i64 %i29, 2
  br i1 %171, label %loop.body27, label %loop.exit28

loop.body27:                                      ; preds = %loop26
  store float -0.000000e+00, ptr %4, align 4
  store i64 0, ptr %5, align 4
  br label %loop30

loop.exit28:                                      ; preds = %loop26
  %172 = icmp eq i64 %34, 1
  %173 = add i64 %41, 2
  %174 = icmp sle i64 %173, %28
  %175 = icmp sge i64 %41, 0
  %176 = and i1 %175, %174
  %177 = and i1 %172, %176
  %178 = icmp sle i64 32, %32
  %179 = and i1 true, %178
  %180 = and i1 %177, %179
  %181 = mul i64 %41, %30
  %182 = add i64 0, %181
  %183 = mul i64 0, %34
  %184 = add i64 %182, %183
  %185 = getelementptr float, ptr %data1, i64 %184
  %186 = select i1 %180, ptr %185, ptr %3
  %187 = select i1 %180, i64 %30, i64 32
  br label %loop34

loop30:                                           ; preds = %loop.body31, %loop.body27
  %i33 = phi i64 [ 0, %loop.body27 ], [ %196, %loop.body31 ]
  %188 = icmp slt i64 %i33, 32
  br i1 %188, label %loop.body31, label %loop.exit32

loop.body31:                                      ; preds = %loop30
  %189 = add i64 0, %i29
  %190 = mul i64 %189, 32
  %191 = add i64 %190, %i33
  %192 = getelementptr inbounds float, ptr %8, i64 %191
  %193 = load float, ptr %192, align 4
  %194 = load float, ptr %4, align 4
  %195 = fadd reassoc float %194, %193
  store float %195, ptr %4, align 4
  %196 = add nuw nsw i64 %i33, 1
  br label %loop30

loop.exit32:                                      ; preds = %loop30
  %197 = load float, ptr %4, align 4
  %198 = add i64 0, %i29
  %199 = getelementptr inbounds float, ptr %6, i64 %198
  store float %197, ptr %199, align 4
  %200 = add nuw nsw i64 %i29, 1
  br label %loop26, !llvm.loop !4

loop34:                                           ; preds = %loop.exit40, %loop.exit28
  %i37 = phi i64 [ 0, %loop.exit28 ], [ %224, %loop.exit40 ]
  %201 = icmp slt i64 %i37, 2
  br i1 %201, label %loop.body35, label %loop.exit36

loop.body35:                                      ; preds = %loop34
  br label %loop38

loop.exit36:                                      ; preds = %loop34
  %202 = xor i1 %180, true
  br i1 %202, label %then42, label %join43

loop38:                                           ; preds = %loop.body39, %loop.body35
  %i41 = phi i64 [ 0, %loop.body35 ], [ %223, %loop.body39 ]
  %203 = icmp slt i64 %i41, 32
  br i1 %203, label %loop.body39, label %loop.exit40

loop.body39:                                      ; preds = %loop38
  %204 = mul i64 %i37, %187
  %205 = add i64 0, %204
  %206 = mul i64 %i41, 1
  %207 = add i64 %205, %206
  %208 = getelementptr inbounds float, ptr %186, i64 %207
  %209 = add i64 0, %i37
  %210 = mul i64 %209, 32
  %211 = add i64 %210, %i41
  %212 = getelementptr inbounds float, ptr %8, i64 %211
  %213 = load float, ptr %212, align 4
  %214 = add i64 0, %i37
  %215 = mul i64 %214, 1
  %216 = add i64 %215, 0
  %217 = urem i64 %216, 2
  %218 = udiv i64 %216, 2
  %219 = add i64 0, %217
  %220 = getelementptr inbounds float, ptr %6, i64 %219
  %221 = load float, ptr %220, align 4
  %222 = fdiv float %213, %221
  store float %222, ptr %208, align 4
  %223 = add nuw nsw i64 %i41, 1
  br label %loop38, !llvm.loop !5

loop.exit40:                                      ; preds = %loop38
  %224 = add nuw nsw i64 %i37, 1
  br label %loop34

then42:                                           ; preds = %loop.exit36
  %225 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %41, ptr %225, align 4
  %226 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %226, align 4
  %227 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %228 = load ptr, ptr %227, align 8
  call void %228(ptr %25, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, ptr %3)
  br label %join43

join43:                                           ; preds = %then42, %loop.exit36
  %229 = add nuw nsw i64 %i, 1
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
