"""A local fake LLM server speaking just enough of the Gemini and OpenAI APIs, for the annotation
backend tests and the window-mode SGP study test (no key, no internet)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

from tests.support import http_server

KEY = "sk-planted-0123456789abcdef"
ANSWER = {
    "word": "big",
    "gesture_description": "both hands trace a circle in front of the chest",
    "contextual_meaning": "size",
    "class": "iconic",
    "confidence": 0.8,
}


class FakeLLM:
    """A local HTTP server speaking just enough of the Gemini and OpenAI APIs; `script` holds the
    (status, text) of the next responses (the last one repeats), or `answer` (request body → text)
    answers each request; every request is kept with its headers and body."""

    def __init__(self, delay: float = 0.0, answer: Callable[[dict], str] | None = None):
        self.script: list[tuple[int, str]] = [(200, json.dumps(ANSWER))]
        self.requests: list[dict] = []
        self.delay = delay
        self.answer = answer
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                fake.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": json.loads(body),
                    }
                )
                status, text = fake.script.pop(0) if len(fake.script) > 1 else fake.script[0]
                if fake.answer is not None:
                    status, text = 200, fake.answer(fake.requests[-1]["body"])
                time.sleep(fake.delay)
                if status != 200:
                    payload = {
                        "error": {
                            "code": status,
                            "message": f"fake error {status}",
                            "status": "UNAVAILABLE",
                        }
                    }
                elif self.path.endswith(":generateContent"):
                    payload = {
                        "candidates": [
                            {
                                "content": {"role": "model", "parts": [{"text": text}]},
                                "finishReason": "STOP",
                            }
                        ]
                    }
                else:
                    payload = {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "m",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text},
                            }
                        ],
                    }
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http_server.start(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def close(self):
        http_server.stop(self.server)
