/**
 * Runs kubectl against a control plane, as a user would: its exit code and output, never a throw for a
 * non-zero exit. `stdin` feeds e.g. `kubectl apply -f -`.
 */
import { execFile } from 'node:child_process';

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function kubectl(kubeconfigPath: string, args: string[], stdin?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfigPath } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}
