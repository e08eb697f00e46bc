/** Free TCP ports on 127.0.0.1 for servers that must be told their port up front. */
import { createServer } from 'node:net';
/**
 * Returns `count` distinct ports that were free a moment ago. All are held open together while they are
 * collected, so the kernel cannot hand out the same port twice; another process could still take one before
 * the server binds it, which on loopback during a test run is rare enough to accept.
 */
export async function reserveFreePorts(count) {
    const servers = [];
    try {
        const ports = [];
        for (let index = 0; index < count; index++) {
            const server = createServer();
            servers.push(server);
            ports.push(await listenOnFreePort(server));
        }
        return ports;
    }
    finally {
        await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    }
}
function listenOnFreePort(server) {
    return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            if (address !== null && typeof address === 'object')
                resolve(address.port);
            else
                reject(new Error(`unexpected server address ${String(address)}`));
        });
    });
}
