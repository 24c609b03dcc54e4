"""oxmem: see and fix what an AI agent remembers.

Importing the package turns off ONNX Runtime's telemetry for the process (``ORT_DISABLE_TELEMETRY=1``, unless the
environment already says otherwise): since 1.2x its Linux and macOS wheels upload usage events to Microsoft and
keep a session file in the temporary folder, and a tool for reading what an agent remembers sends nothing anywhere.
It has to be set before onnxruntime is first imported (fastembed imports it), so it is set here.
"""

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

__version__ = "0.1.0"
