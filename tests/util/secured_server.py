"""What the Python-driven tests need for a secured server: certificates from
scripts/make-certs and a tokens file giving tenant "team" the token
"team-secret"."""

import hashlib
import os
import subprocess

TOKEN = "team-secret"


def secured_server_flags(directory, make_certs):
    """Writes certificates and a tokens file under `directory`; returns the
    CA file clients trust and the server flags for TLS, tokens and local
    workers that dial with TLS."""
    certs = os.path.join(directory, "certs")
    subprocess.run([make_certs, certs], check=True, capture_output=True)
    ca = os.path.join(certs, "ca.pem")
    tokens = os.path.join(directory, "tokens")
    with open(tokens, "w") as f:
        f.write(f"team {hashlib.sha256(TOKEN.encode()).hexdigest()}\n")
    return ca, (f"--tls-cert={certs}/server.pem", f"--tls-key={certs}/server.key", f"--auth-tokens={tokens}",
                f"--local-worker-tls-ca={ca}")
