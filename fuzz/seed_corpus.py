#!/usr/bin/env python3
# Writes the seed corpora under fuzz/corpus/<target>/ from real inputs: the project's host
# fixtures (tests/data/hosts), the /proc and /sys files of the machine it runs on (--host), the
# Kineto traces of tests/data/traces (their first events, plain and gzipped, kept small), and the
# RPC requests, IPC datagrams and config files the docs show. Run it again after adding fixtures;
# review the diff. Files are small (at most a few KiB) so `make test` replays them quickly.
import argparse
import gzip
import json
import os
import struct
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
HOSTS = os.path.join(ROOT, "tests", "data", "hosts")
TRACES = os.path.join(ROOT, "tests", "data", "traces")
MAX_SEED = 4096


def put(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data[:MAX_SEED] if not name.endswith(".gz") else data)


def fixture_files(match):
    """(name, bytes) of fixture files whose path below the host dir satisfies match()."""
    out = []
    for host in sorted(os.listdir(HOSTS)):
        base = os.path.join(HOSTS, host)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, f), base)
                if match(rel):
                    with open(os.path.join(dirpath, f), "rb") as fh:
                        out.append((host + "-" + rel.replace("/", "_"), fh.read()))
    return out


def read_host(path):
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SEED)
    except OSError:
        return None
    if "mount" in path:
        # Keep the kernel's own filesystems; other mounts say nothing more to a parser and would
        # put this machine's private paths in the repository.
        keep = (b"/", b"/proc", b"/sys", b"/dev", b"/run")
        lines = []
        for line in data.split(b"\n"):
            fields = line.split()
            point = fields[4] if "mountinfo" in path and len(fields) > 4 else (
                fields[1] if len(fields) > 1 else b"")
            if point == b"/" or any(point.startswith(k + b"/") or point == k for k in keep[1:]):
                lines.append(line)
        data = b"\n".join(lines) + b"\n"
    return data


def host_parsers(use_host):
    names = ("proc/stat", "proc/diskstats", "proc/loadavg", "proc/meminfo", "proc/net/dev",
             "proc/net/snmp", "proc/net/netstat", "proc/pressure/cpu", "proc/pressure/io",
             "proc/pressure/memory", "proc/1/mounts", "proc/self/mounts", "proc/mdstat")
    seen = set()
    for name, data in fixture_files(lambda r: r in names or r.endswith("node0/meminfo")
                                    or "infiniband" in r):
        if data not in seen:
            seen.add(data)
            put("host_parsers", name, data)
    if use_host:
        for p in names + ("sys/devices/system/node/node0/meminfo",):
            data = read_host("/" + p)
            if data and data not in seen:
                seen.add(data)
                put("host_parsers", "thishost-" + p.replace("/", "_"), data)
    put("host_parsers", "ib-state", "4: ACTIVE\n")
    put("host_parsers", "ib-rate", "100 Gb/sec (4X EDR)\n")


def cgroup(use_host):
    seen = set()
    keep = lambda r: (r.endswith(("/cgroup", "mounts", "mountinfo", "cpu.stat", "io.stat",
                                  "memory.max", "memory.limit_in_bytes", "cpuacct.stat",
                                  "blkio.throttle.io_service_bytes")))
    for name, data in fixture_files(keep):
        if data not in seen and len(seen) < 40:
            seen.add(data)
            put("cgroup", name, data)
    if use_host:
        for p in ("/proc/self/cgroup", "/proc/self/mountinfo", "/proc/self/mounts"):
            data = read_host(p)
            if data and data not in seen:
                seen.add(data)
                put("cgroup", "thishost-" + p[1:].replace("/", "_"), data)
    put("cgroup", "slurm", "0::/slurm/uid_1000/job_1234/step_0/task_0\n")
    put("cgroup", "k8s", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_"
        "4e5f_6789_abcd_ef0123456789.slice/cri-containerd-abc.scope\n")
    put("cgroup", "systemd-user", "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
        "bar.service\n")
    put("cgroup", "outside-namespace", "0::/../../system.slice/foo.service\n")


def proc_pid(use_host):
    seen = set()
    for name, data in fixture_files(lambda r: r.split("/")[-1] in ("stat", "status", "environ",
                                                                   "cmdline")
                                    and r.count("/") == 2):
        if data not in seen and len(seen) < 30:
            seen.add(data)
            put("proc_pid", name, data)
    if use_host:
        for f in ("stat", "status", "cmdline"):
            data = read_host("/proc/self/" + f)
            if data:
                put("proc_pid", "thishost-self-" + f, data)
    put("proc_pid", "stat-comm-with-paren",
        "4242 (py) thon) S 4000 4242 4000 0 -1 4194560 100 0 0 0 25 5 0 0 20 0 8 0 1234 1000 "
        "250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n")
    put("proc_pid", "environ", b"SLURM_JOB_ID=1234\0USER=alice\0PATH=/usr/bin\0NOEQUALS\0")
    put("proc_pid", "status-nspid", "Name:\tpython3\nPPid:\t4000\nUid:\t1000\t1000\t1000\t1000\n"
        "NSpid:\t5000\t7\nThreads:\t8\nVmRSS:\t 1024 kB\n")


def trace_reader():
    for f in sorted(os.listdir(TRACES)):
        if not f.endswith(".json.gz"):
            continue
        with gzip.open(os.path.join(TRACES, f), "rb") as fh:
            head = fh.read(3000)
        stem = f[: -len(".json.gz")]
        put("trace_reader", stem + "-head.json", head)
        put("trace_reader", stem + "-head.json.gz", gzip.compress(head[:2000], mtime=0))
    events = {"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2},
              "traceEvents": [
                  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                   "ts": 1000.5, "dur": 20.25, "args": {"External id": 7}},
                  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": 1005, "dur": 3, "args": {"correlation": 11}},
                  {"ph": "X", "cat": "kernel", "name": "sm80_gemm", "pid": 0, "tid": 7,
                   "ts": 1010, "dur": 50, "args": {"correlation": 11, "device": 0, "stream": 7}},
                  {"ph": "s", "id": 11, "pid": 1, "tid": 1, "ts": 1005, "cat": "ac2g",
                   "name": "ac2g"},
                  {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 1010, "cat": "ac2g",
                   "name": "ac2g", "bp": "e"},
                  {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
                  {"ph": "C", "name": "memory", "pid": 0, "ts": 1020, "args": {"bytes": 4096}},
                  {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 1,
                   "tid": 1, "ts": 999, "dur": 100}]}
    text = json.dumps(events)
    put("trace_reader", "small-all-phases.json", text)
    put("trace_reader", "small-all-phases.json.gz", gzip.compress(text.encode(), mtime=0))


def rpc():
    requests = [
        {"fn": "getStatus"}, {"fn": "getVersion"}, {"fn": "vigilStatus"},
        {"fn": "vigilStatus", "token": "..."}, {"fn": "vigilProcesses"},
        {"fn": "vigilLatest", "selector": "vigil_host_load1"},
        {"fn": "vigilLatest", "selector": "vigil_cpu_seconds_total{mode=\"user\"}"},
        {"fn": "vigilRange", "selector": "vigil_host_cpu_seconds_total{cpu=\"all\",mode=\"idle\"}",
         "start_ns": 1796025700000000000, "end_ns": 1796025762000000000, "step_ns": 0},
        {"fn": "vigilRange", "selector": "vigil_memory_bytes", "step_ns": 10000000000},
        {"fn": "dcgmProfPause", "duration_s": 600}, {"fn": "dcgmProfResume"},
        {"fn": "setKinetOnDemandRequest",
         "config": "ACTIVITIES_LOG_FILE=/tmp/gpu_trace.json\nPROFILE_START_TIME=0\n"
                   "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\n"
                   "PROFILE_PROFILE_MEMORY=false\nPROFILE_WITH_STACK=false\n"
                   "PROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false",
         "job_id": 1234, "pids": [0], "process_limit": 3},
        {"fn": "setKinetOnDemandRequest",
         "config": "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1\n"
                   "ACTIVITIES_ITERATIONS=3", "job_id": 0, "pids": [4343], "process_limit": 1000},
        {"fn": "vigilTraceStart", "job_id": "1234", "pids": [0], "process_limit": 8,
         "duration_ms": 500, "iterations": -1, "log_file": "/tmp/vigil-traces/run7/step.json",
         "profile_start_time": 0, "start_delay_ms": 3000, "profile_start_iteration_roundup": 1,
         "record_shapes": False, "profile_memory": False, "with_stacks": True,
         "with_flops": False, "with_modules": False,
         "config": {"ACTIVITY_TYPES": "kernel,gpu_memcpy"}, "reason": "manual: slow step"},
        {"fn": "vigilTraceStart", "iterations": 5, "upload": {"request_id": "req-1"}},
        {"fn": "vigilTraceList"},
        {"fn": "vigilTraceStatus", "trace_id": "tr-5ef6a02b-0001"},
        {"fn": "vigilTraceCancel", "trace_id": "tr-5ef6a02b-0001"},
    ]
    for i, r in enumerate(requests):
        text = json.dumps(r)
        put("rpc_handlers", "%02d-%s.json" % (i, r["fn"]), text)
        frame = struct.pack("<i", len(text)) + text.encode()
        put("rpc_framing", "%02d-%s.frame" % (i, r["fn"]), b"\x00" + frame)
    put("rpc_handlers", "seq-start-status-cancel.json", json.dumps([
        {"fn": "vigilTraceStart", "job_id": "1234", "duration_ms": 500},
        {"fn": "vigilTraceList"},
        {"fn": "setKinetOnDemandRequest", "config": "ACTIVITIES_DURATION_MSECS=100",
         "job_id": 0, "pids": [4242, 4343]}]))
    two = b"".join(struct.pack("<i", len(json.dumps(r))) + json.dumps(r).encode()
                   for r in requests[:3])
    put("rpc_framing", "pipelined-3.frame", b"\x00" + two)
    put("rpc_framing", "small-limit-oversized.frame", b"\x01" + struct.pack("<i", 1000) + b"{}")
    put("rpc_framing", "negative-length.frame", b"\x00" + struct.pack("<i", -5) + b"{}")


def ipc_datagram(msg_type, payload):
    t = msg_type.encode()
    return struct.pack("=Q", len(payload)) + t + b"\0" * (32 - len(t)) + payload


def ipc():
    req = lambda pids, job=0, cfg=2: struct.pack("=iiq", cfg, len(pids), job) + \
        b"".join(struct.pack("=i", p) for p in pids)
    ctxt = lambda gpu, pid, job: struct.pack("=iiq", gpu, pid, job)
    seeds = {
        "kineto-ctxt": ipc_datagram("ctxt", ctxt(0, 4242, 1234)),
        "kineto-req": ipc_datagram("req", req([4242, 4000, 1], 1234)),
        "kineto-req-namespace": ipc_datagram("req", req([7, 1])),
        "kineto-req-events": ipc_datagram("req", req([4242], 0, 1)),
        "vigil-reg": ipc_datagram("vigil.reg", json.dumps(
            {"pid": 4242, "pids": [4242, 4000, 1], "job_id": "train-42", "team": "vision",
             "model": "resnet50", "framework": "jax", "peak_flops": 9.89e14, "gpu": 0}).encode()),
        "vigil-poll": ipc_datagram("vigil.poll", b"{}"),
        "vigil-step": ipc_datagram("vigil.step", json.dumps(
            {"steps": 4, "step_seconds": 2.0, "input_bytes": 4096,
             "model_flops": 1e11}).encode()),
        "unknown-type": ipc_datagram("hello", b"x"),
        "short-header": b"\x05\0\0\0\0\0\0\0req",
    }
    for name, data in seeds.items():
        put("ipc_datagram", name, data)
    put("ipc_datagram", "register-poll-step",
        seeds["kineto-ctxt"] + seeds["kineto-req"] + seeds["vigil-reg"] + seeds["vigil-step"])


def kineto_config():
    seeds = {
        "dyno-gputrace": "ACTIVITIES_LOG_FILE=/tmp/gpu_trace.json\nPROFILE_START_TIME=0\n"
                         "ACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\n"
                         "PROFILE_PROFILE_MEMORY=false\nPROFILE_WITH_STACK=false\n"
                         "PROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false",
        "iterations": "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1\n"
                      "ACTIVITIES_ITERATIONS=3\n",
        "inside-root": "ACTIVITIES_LOG_FILE=/tmp/vigil-traces/run7/step.json\n",
        "inside-root-pt": "ACTIVITIES_LOG_FILE=/tmp/vigil-traces/a/b.pt.trace.json\n",
        "dotdot": "ACTIVITIES_LOG_FILE=/tmp/vigil-traces/../../etc/passwd\n",
        "relative": "ACTIVITIES_LOG_FILE=traces/x.json\n",
        "comments": "# comment\n\nACTIVITY_TYPES=kernel, gpu_memcpy ,cuda_runtime\r\n"
                    "REQUEST_TRACE_ID=abc.1-2\nACTIVITIES_WARMUP_PERIOD_SECS=5\n",
        "refused-key": "ACTIVITIES_LOG_URL=http://x\n",
        "path-only": "/var/lib/vigil/traces/job/x.json",
    }
    for name, text in seeds.items():
        put("kineto_config", name, text)


def daemon_config():
    put("daemon_config", "minimal.toml", 'interval = "10s"\n')
    put("daemon_config", "full.toml", '''interval = "10s"
log_level = "info"
rpc_listen = "127.0.0.1:1778"
http_listen = "127.0.0.1:9479"
trace_root = "/tmp/vigil-traces"
process_patterns = ["python.*train"]

[collectors.proc_cpu]
enabled = false

[collectors.proc_pressure]
interval = "5s"

gpu_backend = "sim"
jsonl = "/var/log/vigil/metrics.jsonl"
jsonl_max_bytes = 1048576
env_allow_list = ["SLURM_JOB_ID", "VIGIL_TEAM"]
cgroup_patterns = ["/slurm*/uid_*/job_*"]

[auto_trace]
periodic = true
periodic_every = "6h"
low_utilization = true
low_utilization_below = 0.2
low_utilization_for = "10m"
max_traces_per_hour = 4
duration_ms = 2000
upload = false
''')
    put("daemon_config", "override.txt", "rpc-listen=0.0.0.0:1778")
    put("daemon_config", "bad.toml", "interval = [\n")
    for f in sorted(os.listdir(os.path.join(ROOT, "deploy"))) if os.path.isdir(
            os.path.join(ROOT, "deploy")) else []:
        if f.endswith(".toml"):
            with open(os.path.join(ROOT, "deploy", f), "rb") as fh:
                put("daemon_config", "deploy-" + f, fh.read())


def fleet_ingest():
    batch = {"host": "node01", "batch_id": "node01-1764410994-42", "seq": 42, "samples": [
        {"name": "vigil_gpu_allocated_seconds_total", "kind": "counter",
         "labels": {"gpu_uuid": "GPU-1", "job_id": "7"}, "value": 12.5,
         "time_ns": 1764410994000000000},
        {"name": "vigil_gpu_sm_active_ratio", "labels": {"job_id": "7", "gpu_uuid": "GPU-1"},
         "value": 0.75, "time_ns": 1764410994000000000}]}
    text = json.dumps(batch)
    put("fleet_ingest", "batch.json", text)
    put("fleet_ingest", "batch.json.gz", gzip.compress(text.encode(), mtime=0))
    put("fleet_ingest", "empty-samples.json", json.dumps(dict(batch, samples=[])))
    put("fleet_ingest", "bomb.gz", gzip.compress(b"0" * (4 << 20), mtime=0))


def remote_write():
    def varint(v):
        out = b""
        while v >= 0x80:
            out += bytes([(v & 0x7f) | 0x80])
            v >>= 7
        return out + bytes([v])

    def ld(field, b):
        return bytes([(field << 3) | 2]) + varint(len(b)) + b

    label = lambda n, v: ld(1, ld(1, n.encode()) + ld(2, v.encode()))
    sample = lambda val, ts: ld(2, b"\x09" + struct.pack("<d", val) + b"\x10" + varint(ts))
    series = ld(1, label("__name__", "vigil_cpu_seconds_total") + label("host", "node01") +
                sample(1.5, 1764410994000) + sample(2.5, 1764411004000))
    stale = ld(1, label("__name__", "up") + ld(2, b"\x09" + struct.pack(
        "<Q", 0x7ff0000000000002) + b"\x10" + varint(1)))
    put("remote_write", "write-request.pb", series)
    put("remote_write", "stale-marker.pb", stale)
    put("remote_write", "two-series.pb", series + stale)
    put("remote_write", "structured-seed", bytes(range(1, 200)))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", action="store_true", help="also copy this machine's /proc files")
    args = ap.parse_args()
    host_parsers(args.host)
    cgroup(args.host)
    proc_pid(args.host)
    trace_reader()
    rpc()
    ipc()
    kineto_config()
    daemon_config()
    fleet_ingest()
    remote_write()
    for t in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, t))
        size = sum(os.path.getsize(os.path.join(CORPUS, t, f)) for f in files)
        print(f"{t}: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    sys.exit(main())
