"""A real SMTP server for the e-mail tests: Debian's aiosmtpd on a free loopback port.

Prints one JSON line {"port": N} once it listens, then one JSON line per message received:
{"mailFrom", "rcptTos", "data", "login"}. With TAGD_SMTP_USER and TAGD_SMTP_PASSWORD set,
authentication (PLAIN, LOGIN; allowed without TLS on loopback) is required and only that
account is accepted.
"""
import asyncio
import json
import os
import socket
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

USER = os.environ.get("TAGD_SMTP_USER")
PASSWORD = os.environ.get("TAGD_SMTP_PASSWORD")


class Handler:
    async def handle_DATA(self, server, session, envelope):
        auth = session.auth_data
        login = auth.login.decode("utf-8", "replace") if isinstance(auth, LoginPassword) else None
        print(
            json.dumps(
                {
                    "mailFrom": envelope.mail_from,
                    "rcptTos": envelope.rcpt_tos,
                    "data": envelope.content.decode("utf-8", "replace"),
                    "login": login,
                }
            ),
            flush=True,
        )
        return "250 Message accepted for delivery"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (
        isinstance(auth_data, LoginPassword)
        and auth_data.login.decode() == USER
        and auth_data.password.decode() == PASSWORD
    )
    return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)


async def main():
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    handler = Handler()

    def factory():
        if USER:
            return SMTP(
                handler,
                authenticator=authenticator,
                auth_required=True,
                auth_require_tls=False,
            )
        return SMTP(handler)

    server = await loop.create_server(factory, sock=sock)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
