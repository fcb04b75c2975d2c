import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

// deploy/kubernetes against Kubernetes 1.36's OpenAPI schemas (kubernetes-models 5.x is generated
// from v1.36.0's spec) and deploy/compose against the Compose Specification, offline.
const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const KUBERNETES = join(DEPLOY, 'kubernetes');
const COMPOSE = join(DEPLOY, 'compose');
const README = readFileSync(join(DEPLOY, 'README.md'), 'utf8');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  [field: string]: unknown;
}

interface Validatable {
  validate(): void;
}

/** kubernetes-models' class of an object: `apps/v1` Deployment is `kubernetes-models/apps/v1/Deployment`. */
async function modelOf(object: K8sObject): Promise<new (data: unknown) => Validatable> {
  const module = (await import(`kubernetes-models/${object.apiVersion}/${object.kind}`)) as Record<string, new (data: unknown) => Validatable>;
  const model = module[object.kind];
  if (!model) throw new Error(`kubernetes-models has no ${object.apiVersion} ${object.kind}`);
  return model;
}

/** The schema's verdict on an object: undefined when valid, else the validator's message. */
async function problemsOf(object: K8sObject): Promise<string | undefined> {
  const Model = await modelOf(object);
  try {
    new Model(object).validate();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

const kustomization = parseYaml(readFileSync(join(KUBERNETES, 'kustomization.yaml'), 'utf8')) as {
  resources: string[];
  configMapGenerator: { name: string; files: string[] }[];
};
const manifestFiles = readdirSync(KUBERNETES).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const objects: { file: string; object: K8sObject }[] = manifestFiles.flatMap((file) =>
  parseAllDocuments(readFileSync(join(KUBERNETES, file), 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    return { file, object: doc.toJS() as K8sObject };
  }),
);
const named = (kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.object.kind === kind && o.object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return found.object;
};

interface PodSpec {
  terminationGracePeriodSeconds?: number;
  containers: {
    name: string;
    readinessProbe?: { grpc?: { port: number } };
    livenessProbe?: { grpc?: { port: number } };
    ports?: { containerPort: number }[];
  }[];
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string; items?: { key: string }[] } }[];
}
const podSpecOf = (o: K8sObject): PodSpec => (o['spec'] as { template: { spec: PodSpec } }).template.spec;
const workloads = objects.filter((o) => ['Deployment', 'StatefulSet'].includes(o.object.kind)).map((o) => o.object);

describe('deploy/kubernetes', () => {
  it.each(objects.map((o) => [`${o.file}: ${o.object.kind} ${o.object.metadata.name}`, o.object] as const))(
    '%s is valid against Kubernetes 1.36',
    async (_name, object) => {
      expect(await problemsOf(object)).toBeUndefined();
    },
  );

  it('the validator refuses what Kubernetes would: a wrong type, a missing required field', async () => {
    const deployment = structuredClone(named('Deployment', 'kiln-scheduler'));
    (deployment['spec'] as Record<string, unknown>)['replicas'] = 'one';
    expect(await problemsOf(deployment)).toMatch(/replicas/);
    const hpa = structuredClone(named('HorizontalPodAutoscaler', 'kiln-executor'));
    delete (hpa['spec'] as Record<string, unknown>)['scaleTargetRef'];
    expect(await problemsOf(hpa)).toMatch(/scaleTargetRef/);
    const probe = structuredClone(named('StatefulSet', 'kiln-storage'));
    podSpecOf(probe).containers[0]!.readinessProbe = { grpc: {} as { port: number } };
    expect(await problemsOf(probe)).toMatch(/port/);
  });

  it('the kustomization lists every manifest and generates every ConfigMap the pods mount from files that exist', () => {
    expect([...kustomization.resources].sort()).toEqual([...manifestFiles].sort());
    for (const generator of kustomization.configMapGenerator) {
      for (const entry of generator.files) expect(existsSync(join(KUBERNETES, entry.split('=').at(-1)!)), entry).toBe(true);
    }
    const generated = new Set(kustomization.configMapGenerator.map((g) => g.name));
    for (const workload of workloads) {
      for (const volume of podSpecOf(workload).volumes ?? []) {
        if (volume.configMap) expect(generated, `${workload.metadata.name}: ${volume.name}`).toContain(volume.configMap.name);
      }
    }
  });

  it('every Secret the pods mount, with every key, is made by a command of deploy/README.md', () => {
    for (const workload of workloads) {
      for (const volume of podSpecOf(workload).volumes ?? []) {
        if (!volume.secret) continue;
        expect(README).toContain(`create secret generic ${volume.secret.secretName} `);
        for (const item of volume.secret.items ?? []) expect(README).toContain(`--from-file=${item.key}=`);
      }
    }
  });

  it('storage is a StatefulSet with a claim per pod; the executors scale on the queue and have a grace period; every pod has gRPC probes', () => {
    const storage = named('StatefulSet', 'kiln-storage');
    const claims = (storage['spec'] as { volumeClaimTemplates: { metadata: { name: string } }[] }).volumeClaimTemplates;
    expect(claims.map((c) => c.metadata.name)).toEqual(['data']);
    expect(named('Service', 'kiln-storage')['spec']).toMatchObject({ clusterIP: 'None' });
    expect(named('Service', 'kiln-scheduler')['spec']).toMatchObject({ ports: [{ port: 8980 }] });
    expect(named('HorizontalPodAutoscaler', 'kiln-executor')).toMatchObject({
      apiVersion: 'autoscaling/v2',
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'kiln-executor' },
        metrics: [{ type: 'External', external: { metric: { name: 'kiln_queue_length' } } }],
      },
    });
    // The executor's drain fits in its grace period, with time left to abort and clean up.
    const drainSeconds = (JSON.parse(readFileSync(join(KUBERNETES, 'config', 'executor.json'), 'utf8')) as Record<string, number>)['drain-timeout']!;
    expect(drainSeconds).toBeGreaterThan(0);
    expect(podSpecOf(named('Deployment', 'kiln-executor')).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(drainSeconds + 10);
    for (const workload of workloads) {
      for (const container of podSpecOf(workload).containers) {
        expect(container.readinessProbe?.grpc?.port, workload.metadata.name).toBe(8981);
        expect(container.livenessProbe?.grpc?.port, workload.metadata.name).toBe(8981);
      }
    }
  });

  it("each role's metrics port is a container port its pod asks Prometheus to scrape; the scheduler journals its operations and drains within its grace period", () => {
    const config = (name: string) => JSON.parse(readFileSync(join(KUBERNETES, 'config', name), 'utf8')) as Record<string, unknown>;
    const ports: Record<string, number> = {
      'kiln-scheduler': config('scheduler.json')['metricsPort'] as number,
      'kiln-storage': config('storage.json')['metricsPort'] as number,
      'kiln-executor': config('executor.json')['metrics-port'] as number,
    };
    for (const workload of workloads) {
      const port = ports[workload.metadata.name]!;
      expect(port, workload.metadata.name).toBeGreaterThan(0);
      const template = (workload['spec'] as { template: { metadata: { annotations?: Record<string, string> } } }).template;
      expect(template.metadata.annotations, workload.metadata.name).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(port),
        'prometheus.io/path': '/metrics',
      });
      expect(
        podSpecOf(workload).containers[0]!.ports?.map((p) => p.containerPort),
        workload.metadata.name,
      ).toContain(port);
    }
    const execution = config('scheduler.json')['execution'] as { drainTimeoutMs: number; operationsFile: string };
    expect(podSpecOf(named('Deployment', 'kiln-scheduler')).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(execution.drainTimeoutMs / 1000 + 10);
    const mounts = (podSpecOf(named('Deployment', 'kiln-scheduler')).containers[0] as unknown as { volumeMounts: { mountPath: string }[] }).volumeMounts;
    expect(
      mounts.some((m) => execution.operationsFile.startsWith(`${m.mountPath}/`)),
      execution.operationsFile,
    ).toBe(true);
  });

  it('the health port of each role config is the port the probes use', () => {
    const config = (name: string) => JSON.parse(readFileSync(join(KUBERNETES, 'config', name), 'utf8')) as Record<string, unknown>;
    expect(config('scheduler.json')['healthPort']).toBe(8981);
    expect(config('storage.json')['healthPort']).toBe(8981);
    expect(config('executor.json')['health-port']).toBe(8981);
  });
});

const composeFile = join(COMPOSE, 'compose.yaml');
const compose = parseYaml(readFileSync(composeFile, 'utf8')) as {
  services: Record<string, { network_mode?: string; volumes?: string[]; image: string; networks?: unknown }>;
  networks?: unknown;
  configs: Record<string, { file: string }>;
};
const composePlugin = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;

describe('deploy/compose/compose.yaml', () => {
  it(composePlugin ? 'is valid for docker compose config' : 'is valid against the Compose Specification schema (no docker compose plugin here)', () => {
    if (composePlugin) {
      const checked = spawnSync('docker', ['compose', '-f', composeFile, 'config', '--quiet'], { encoding: 'utf8' });
      expect(checked.status, checked.stderr).toBe(0);
      return;
    }
    const schema = JSON.parse(readFileSync(join(COMPOSE, 'compose-spec.schema.json'), 'utf8')) as object;
    // The spec names draft 07 by its https address; Ajv knows it by the http one.
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addMetaSchema({ ...draft07, $id: 'https://json-schema.org/draft-07/schema' });
    const validate = ajv.compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    // The schema does refuse a wrong file: a service with an unknown field.
    const broken = structuredClone(compose);
    (broken.services['scheduler'] as Record<string, unknown>)['netwrk_mode'] = 'host';
    expect(validate(broken)).toBe(false);
  });

  it('uses host networking only, the host Docker socket for the executor, and config files that exist', () => {
    expect(compose.networks).toBeUndefined();
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.network_mode, name).toBe('host');
      expect(service.networks, name).toBeUndefined();
      expect(service.image, name).toBe(`kiln/${name}:latest`);
    }
    expect(compose.services['executor']!.volumes).toContain('/var/run/docker.sock:/var/run/docker.sock');
    for (const [name, config] of Object.entries(compose.configs)) expect(existsSync(join(COMPOSE, config.file)), name).toBe(true);
  });
});
