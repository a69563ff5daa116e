"""PyTorch's figures on the same GPU, for `scripts/gpu-check`: the device copy, softmax and matmul.

Each line of output is one JSON object. Times are CUDA-event medians after warm-up, on random data,
rotating among several input sets so that repeated runs do not measure the cache.
"""
import json
import torch


def median_ms(fn, rounds=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def main():
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(json.dumps({"device": props.name, "torch": torch.__version__, "sms": props.multi_processor_count}))
    n = 256 << 20
    src = torch.randint(0, 255, (n,), dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src))
    print(json.dumps({"op": "copy", "bytes": n, "ms": ms, "gbs": 2 * n / ms / 1e6}))
    del src, dst
    for dtype, name in [(torch.float32, "f32"), (torch.bfloat16, "bf16")]:
        for cols in [1024, 4096, 8192]:
            rows = (256 << 20) // (4 * cols)
            xs = [torch.randn(rows, cols, device=dev, dtype=dtype) * 4 for _ in range(2)]
            out = torch.empty_like(xs[0])
            k = [0]

            def run():
                k[0] ^= 1
                torch.softmax(xs[k[0]], dim=-1, out=out)

            ms = median_ms(run)
            b = 2 * xs[0].numel() * xs[0].element_size()
            print(json.dumps({"op": "softmax", "dtype": name, "shape": [rows, cols], "ms": ms, "gbs": b / ms / 1e6}))
            del xs, out
    for dtype, name in [(torch.bfloat16, "bf16"), (torch.float16, "f16")]:
        for m, nn, kk in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336),
                          (8192, 28672, 8192), (8192, 8192, 28672)]:
            # B as axe's gemm takes it: [N, K] row-major (B column-major), as nn.Linear keeps weights.
            a = torch.randn(m, kk, device=dev, dtype=dtype)
            b = torch.randn(nn, kk, device=dev, dtype=dtype).T
            ms = median_ms(lambda: a @ b, rounds=10)
            print(json.dumps({"op": "matmul", "dtype": name, "mnk": [m, nn, kk], "ms": ms,
                              "tflops": 2 * m * nn * kk / ms / 1e9}))
            del a, b
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
