"""A loopback OTLP receiver for tests: decodes what exporters send with opentelemetry-proto."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Received:
    """What the receiver decoded, by signal."""

    traces: list[ExportTraceServiceRequest] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    logs: list[ExportLogsServiceRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def spans(self) -> list[Any]:
        """Every span received, flattened."""
        with self.lock:
            return [
                span
                for req in self.traces
                for rs in req.resource_spans
                for ss in rs.scope_spans
                for span in ss.spans
            ]

    def log_records(self) -> list[Any]:
        """Every log record received, flattened."""
        with self.lock:
            return [
                record
                for req in self.logs
                for rl in req.resource_logs
                for sl in rl.scope_logs
                for record in sl.log_records
            ]

    def metric_names(self) -> set[str]:
        """The names of every metric received."""
        with self.lock:
            return {
                m.name
                for req in self.metrics
                for rm in req.resource_metrics
                for sm in rm.scope_metrics
                for m in sm.metrics
            }


@contextmanager
def otlp_http_receiver() -> Iterator[tuple[str, Received]]:
    """Serve OTLP/HTTP (protobuf) on a free loopback port; yields its base URL and inbox."""
    inbox = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            reply: Any
            if self.path == "/v1/traces":
                request: Any = ExportTraceServiceRequest.FromString(body)
                with inbox.lock:
                    inbox.traces.append(request)
                reply = ExportTraceServiceResponse()
            elif self.path == "/v1/metrics":
                request = ExportMetricsServiceRequest.FromString(body)
                with inbox.lock:
                    inbox.metrics.append(request)
                reply = ExportMetricsServiceResponse()
            elif self.path == "/v1/logs":
                request = ExportLogsServiceRequest.FromString(body)
                with inbox.lock:
                    inbox.logs.append(request)
                reply = ExportLogsServiceResponse()
            else:
                self.send_response(404)
                self.end_headers()
                return
            data = reply.SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", inbox
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def otlp_grpc_receiver() -> Iterator[tuple[str, Received]]:
    """Serve OTLP/gRPC traces on a free loopback port; yields its endpoint and inbox."""
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    inbox = Received()

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: Any) -> ExportTraceServiceResponse:
            with inbox.lock:
                inbox.traces.append(request)
            return ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", inbox
    finally:
        server.stop(None)
