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
  %27 = sub i64 %2, %1
  br label %loop

loop:                                             ; preds = %join10, %entry
  %i = phi i64 [ 0, %entry ], [ %94, %join10 ]
  %28 = icmp slt i64 %i, %27
  br i1 %28, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %29 = add i64 %i, 0
  %30 = sub i64 %29, %27
  %31 = icmp sge i64 %29, %27
  %32 = select i1 %31, i64 %30, i64 %29
  %33 = add i64 %1, %32
  %34 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %33, ptr %34, align 4
  %35 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 0, ptr %35, align 4
  %36 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %36, align 4
  %37 = mul i64 %33, 1024
  %38 = icmp eq i64 %12, 1
  %39 = add i64 %37, 1024
  %40 = icmp sle i64 %39, %10
  %41 = icmp sge i64 %37, 0
  %42 = and i1 %41, %40
  %43 = and i1 %38, %42
  %44 = mul i64 %37, %12
  %45 = add i64 0, %44
  %46 = getelementptr float, ptr %data, i64 %45
  %47 = select i1 %43, ptr %46, ptr %5
  %48 = icmp eq i64 %24, 1
  %49 = add i64 %37, 1024
  %50 = icmp sle i64 %49, %22
  %51 = icmp sge i64 %37, 0
  %52 = and i1 %51, %50
  %53 = and i1 %48, %52
  %54 = xor i1 %53, true
  br i1 %54, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %55 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %37, ptr %55, align 4
  %56 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %57 = load ptr, ptr %56, align 8
  call void %57(ptr %19, i32 1, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %4)
  br label %join

join:                                             ; preds = %then, %loop.body
  %58 = mul i64 %37, %24
  %59 = add i64 0, %58
  %60 = getelementptr float, ptr %data2, i64 %59
  %61 = select i1 %53, ptr %60, ptr %4
  %62 = icmp eq i64 %18, 1
  %63 = add i64 %37, 1024
  %64 = icmp sle i64 %63, %16
  %65 = icmp sge i64 %37, 0
  %66 = and i1 %65, %64
  %67 = and i1 %62, %66
  %68 = xor i1 %67, true
  br i1 %68, label %then3, label %join4

then3:                                            ; preds = %join
  %69 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %37, ptr %69, align 4
  %70 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %71 = load ptr, ptr %70, align 8
  call void %71(ptr %13, i32 1, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %3)
  br label %join4

join4:                                            ; preds = %then3, %join
  %72 = mul i64 %37, %18
  %73 = add i64 0, %72
  %74 = getelementptr float, ptr %data1, i64 %73
  %75 = select i1 %67, ptr %74, ptr %3
  br label %loop5

loop5:                                            ; preds = %loop.body6, %join4
  %i8 = phi i64 [ 0, %join4 ], [ %89, %loop.body6 ]
  %76 = icmp slt i64 %i8, 1024
  br i1 %76, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %77 = mul i64 %i8, 1
  %78 = add i64 0, %77
  %79 = getelementptr inbounds float, ptr %47, i64 %78
  %80 = mul i64 %i8, 1
  %81 = add i64 0, %80
  %82 = getelementptr inbounds float, ptr %61, i64 %81
  %83 = load float, ptr %82, align 4
  %84 = mul i64 %i8, 1
  %85 = add i64 0, %84
  %86 = getelementptr inbounds float, ptr %75, i64 %85
  %87 = load float, ptr %86, align 4
  %88 = fadd float %83, %87
  store float %88, ptr %79, align 4
  %89 = add nuw nsw i64 %i8, 1
  br label %loop5, !llvm.loop !0

loop.exit7:                                       ; preds = %loop5
  %90 = xor i1 %43, true
  br i1 %90, label %then9, label %join10

then9:                                            ; preds = %loop.exit7
  %91 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %37, ptr %91, align 4
  %92 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %93 = load ptr, ptr %92, align 8
  call void %93(ptr %7, i32 1, i32 4, ptr %block_firsts, ptr @block_shape, ptr %5)
  br label %join10

join10:                                           ; preds = %then9, %loop.exit7
  %94 = add nuw nsw i64 %i, 1
  br label %loop
}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
