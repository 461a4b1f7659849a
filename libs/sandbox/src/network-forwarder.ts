/**
 * The inside half of the sandbox network (README "Code sandbox"): the sandbox's network namespace has
 * only a loopback, so a small Python forwarder listens on 127.0.0.1:PROXY_PORT there and passes each
 * connection to the host proxy's unix socket, bound into the sandbox. HTTP_PROXY / HTTPS_PROXY point
 * at it, which pip, requests, urllib and curl honour.
 */

/** Where the host proxy's socket appears inside the sandbox. */
export const PROXY_SOCKET_IN_SANDBOX = '/run/agentloop/proxy.sock';
/** The forwarder's port on the sandbox's own loopback. */
export const PROXY_PORT = 3128;

/**
 * Binds the port first and only then forks: the listening socket exists before the program starts, so
 * its first request cannot race the forwarder. The parent execs the program (keeping its pid, stdin
 * and exit status for bwrap); the child forwards, with its stdio on /dev/null so it holds no pipe of
 * the run open. It dies with the sandbox's PID namespace when the program ends.
 */
const FORWARDER = `
import asyncio, os, socket, sys
port, sock_path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(128)
if os.fork() == 0:
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    async def pipe(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except OSError:
            pass
    async def handle(client_r, client_w):
        try:
            up_r, up_w = await asyncio.open_unix_connection(sock_path)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w))
        up_w.close()
        client_w.close()
    async def main():
        server = await asyncio.start_server(handle, sock=srv)
        await server.serve_forever()
    asyncio.run(main())
    os._exit(0)
srv.close()
os.execvp(argv[0], argv)
`;

/** The program's argv wrapped so the forwarder runs beside it. */
export function withForwarder(pythonPath: string, argv: readonly string[]): string[] {
  return [pythonPath, '-c', FORWARDER, String(PROXY_PORT), PROXY_SOCKET_IN_SANDBOX, '--', ...argv];
}

/** The proxy variables, in both spellings tools read. */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: '', no_proxy: '' };
}
