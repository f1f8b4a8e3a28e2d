; ModuleID = 'tilejit.vector_add'
source_filename = "tilejit.vector_add"

@block_shape = private constant [1 x i64] [i64 1024]

; Function Attrs: nounwind
define void @tj_kernel(ptr %0, i64 %1, i64 %2) #0 {
entry:
  %3 = alloca float, i64 1024, align 64
  %block_firsts = alloca [4 x i64], align 8
  %4 = alloca float, i64 1024, align 64
  %5 = alloca float, i64 1024, align 64
  %6 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %6, align 8
  %7 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %8 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %7, i32 0, i32 0
  %data = load ptr, ptr %8, align 8
  %9 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %7, i32 0, i32 1, i32 0
  %10 = load i64, ptr %9, align 4
  %11 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %7, i32 0, i32 2, i32 0
  %12 = load i64, ptr %11, align 4
  %13 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %14 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %13, i32 0, i32 0
  %data1 = load ptr, ptr %14, align 8
  %15 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %13, i32 0, i32 1, i32 0
  %16 = load i64, ptr %15, align 4
  %17 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %13, i32 0, i32 2, i32 0
  %18 = load i64, ptr %17, align 4
  %19 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 2
  %20 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 0
  %data2 = load ptr, ptr %20, align 8
  %21 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 1, i32 0
  %22 = load i64, ptr %21, align 4
  %23 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 2, i32 0
  %24 = load i64, ptr %23, align 4
  %25 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %26 = load i64, ptr %25, align 4
  %program_id = alloca [3 x i64], align 8
  br label %loop

loop:                                             ; preds = %join10, %entry
  %i = phi i64 [ %1, %entry ], [ %88, %join10 ]
  %27 = icmp slt i64 %i, %2
  br i1 %27, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %28 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %i, ptr %28, align 4
  %29 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 0, ptr %29, align 4
  %30 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %30, align 4
  %31 = mul i64 %i, 1024
  %32 = icmp eq i64 %12, 1
  %33 = add i64 %31, 1024
  %34 = icmp sle i64 %33, %10
  %35 = icmp sge i64 %31, 0
  %36 = and i1 %35, %34
  %37 = and i1 %32, %36
  %38 = mul i64 %31, %12
  %39 = add i64 0, %38
  %40 = getelementptr float, ptr %data, i64 %39
  %41 = select i1 %37, ptr %40, ptr %5
  %42 = icmp eq i64 %24, 1
  %43 = add i64 %31, 1024
  %44 = icmp sle i64 %43, %22
  %45 = icmp sge i64 %31, 0
  %46 = and i1 %45, %44
  %47 = and i1 %42, %46
  %48 = xor i1 %47, true
  br i1 %48, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %49 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %31, ptr %49, align 4
  %50 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %51 = load ptr, ptr %50, align 8
  call void %51(ptr %19, i32 1, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %4)
  br label %join

join:                                             ; preds = %then, %loop.body
  %52 = mul i64 %31, %24
  %53 = add i64 0, %52
  %54 = getelementptr float, ptr %data2, i64 %53
  %55 = select i1 %47, ptr %54, ptr %4
  %56 = icmp eq i64 %18, 1
  %57 = add i64 %31, 1024
  %58 = icmp sle i64 %57, %16
  %59 = icmp sge i64 %31, 0
  %60 = and i1 %59, %58
  %61 = and i1 %56, %60
  %62 = xor i1 %61, true
  br i1 %62, label %then3, label %join4

then3:                                            ; preds = %join
  %63 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %31, ptr %63, align 4
  %64 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %65 = load ptr, ptr %64, align 8
  call void %65(ptr %13, i32 1, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %3)
  br label %join4

join4:                                            ; preds = %then3, %join
  %66 = mul i64 %31, %18
  %67 = add i64 0, %66
  %68 = getelementptr float, ptr %data1, i64 %67
  %69 = select i1 %61, ptr %68, ptr %3
  br label %loop5

loop5:                                            ; preds = %loop.body6, %join4
  %i8 = phi i64 [ 0, %join4 ], [ %83, %loop.body6 ]
  %70 = icmp slt i64 %i8, 1024
  br i1 %70, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %71 = mul i64 %i8, 1
  %72 = add i64 0, %71
  %73 = getelementptr inbounds float, ptr %41, i64 %72
  %74 = mul i64 %i8, 1
  %75 = add i64 0, %74
  %76 = getelementptr inbounds float, ptr %55, i64 %75
  %77 = load float, ptr %76, align 4
  %78 = mul i64 %i8, 1
  %79 = add i64 0, %78
  %80 = getelementptr inbounds float, ptr %69, i64 %79
  %81 = load float, ptr %80, align 4
  %82 = fadd float %77, %81
  store float %82, ptr %73, align 4
  %83 = add nuw nsw i64 %i8, 1
  br label %loop5, !llvm.loop !0

loop.exit7:                                       ; preds = %loop5
  %84 = xor i1 %37, true
  br i1 %84, label %then9, label %join10

then9:                                            ; preds = %loop.exit7
  %85 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %31, ptr %85, align 4
  %86 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %87 = load ptr, ptr %86, align 8
  call void %87(ptr %7, i32 1, i32 4, ptr %block_firsts, ptr @block_shape, ptr %5)
  br label %join10

join10:                                           ; preds = %then9, %loop.exit7
  %88 = add nuw nsw i64 %i, 1
  br label %loop
}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
