/**
 * The pure parts of the PostgreSQL-backed Temporal test server: where PostgreSQL is found, which account runs it,
 * ports that fit Temporal's membership table, and how a test run picks its Temporal server. No server is started.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { reserveFreePortsBelow } from '../../../scripts/lib/free-ports.js';
import { findPostgresBinDir, postgresAccount } from '../../../scripts/lib/postgres.js';
import { temporalDevServer } from '../../../scripts/lib/temporal-dev-server.js';
import { temporalPostgresServer } from '../../../scripts/lib/temporal-postgres-server.js';
import {
  TEST_SERVER_DEFINITIONS,
  parseTemporalServerKind,
  testServerDefinitions,
} from '../../../scripts/lib/test-servers.js';

let root: string;

async function fakeBinDir(dir: string, programs: readonly string[]): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const program of programs) {
    await writeFile(join(dir, program), '#!/bin/sh\n');
    await chmod(join(dir, program), 0o755);
  }
  return dir;
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'eniflow-pg-unit-'));
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('finding PostgreSQL', () => {
  it('takes the first PATH directory with both initdb and postgres', async () => {
    const onlyInitdb = await fakeBinDir(join(root, 'a'), ['initdb']);
    const both = await fakeBinDir(join(root, 'b'), ['initdb', 'postgres']);
    assert.equal(findPostgresBinDir({ path: `${onlyInitdb}:${both}`, debianRoot: join(root, 'none') }), both);
  });

  it("falls back to Debian's newest major version, and to nothing", async () => {
    const debianRoot = join(root, 'usr-lib-postgresql');
    await fakeBinDir(join(debianRoot, '9', 'bin'), ['initdb', 'postgres']);
    const newest = await fakeBinDir(join(debianRoot, '15', 'bin'), ['initdb', 'postgres']);
    await mkdir(join(debianRoot, 'common'));
    assert.equal(findPostgresBinDir({ path: join(root, 'empty'), debianRoot }), newest);
    assert.equal(findPostgresBinDir({ path: '', debianRoot: join(root, 'none') }), undefined);
  });
});

describe('the account PostgreSQL runs as', () => {
  it("is this process's own unless it is root; as root postgres, else nobody", async () => {
    const passwd = join(root, 'passwd');
    await writeFile(passwd, 'root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/usr/sbin/nologin\n');
    const asRoot = process.getuid?.() === 0;
    assert.deepEqual(postgresAccount(passwd), asRoot ? { name: 'nobody', uid: 65534, gid: 65534 } : undefined);
    await writeFile(passwd, 'postgres:x:101:104::/var/lib/postgresql:/bin/bash\nnobody:x:65534:65534::/:/bin/false\n');
    assert.deepEqual(postgresAccount(passwd), asRoot ? { name: 'postgres', uid: 101, gid: 104 } : undefined);
  });
});

describe('ports for the Temporal server', () => {
  it('are distinct, free and below 32768 (cluster_membership.rpc_port is a smallint)', async () => {
    const ports = await reserveFreePortsBelow(9);
    assert.equal(new Set(ports).size, 9);
    for (const port of ports) {
      assert.ok(port >= 20_000 && port <= 32_767, String(port));
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('skip a taken port', async () => {
    const taken = createServer();
    const port = await new Promise<number>((resolve) => {
      taken.listen(0, '127.0.0.1', () => {
        const address = taken.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
    try {
      assert.deepEqual(await reserveFreePortsBelow(1, { low: port, high: port + 1 }), [port + 1]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe('choosing the Temporal server of a test run', () => {
  it('is the dev server unless ENIFLOW_TEST_TEMPORAL says postgres', () => {
    assert.equal(parseTemporalServerKind(undefined), 'dev');
    assert.equal(parseTemporalServerKind(''), 'dev');
    assert.equal(parseTemporalServerKind('postgres'), 'postgres');
    assert.throws(() => parseTemporalServerKind('mysql'), /unknown Temporal server "mysql"; known: dev, postgres/);
  });

  it('swaps only the Temporal server, under the same name (so --only=temporal works)', () => {
    assert.equal(testServerDefinitions('dev'), TEST_SERVER_DEFINITIONS);
    const postgres = testServerDefinitions('postgres');
    assert.deepEqual(
      postgres.map(({ name }) => name),
      TEST_SERVER_DEFINITIONS.map(({ name }) => name),
    );
    assert.ok(postgres.includes(temporalPostgresServer));
    assert.ok(!postgres.includes(temporalDevServer));
  });
});
