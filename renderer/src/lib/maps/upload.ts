import { ApiError } from '../../api/client';

/**
 * Sends a file as the request body with XMLHttpRequest, because fetch reports no upload progress:
 * `onprogress` gets the fraction sent (0–1). Same-origin with the session cookie and the console's
 * CSRF header, like the API client; answers the parsed JSON reply or throws an ApiError with the
 * server's code and message.
 */
export function uploadFile(
  method: 'PUT' | 'POST',
  url: string,
  file: Blob,
  contentType: string,
  onprogress: (fraction: number) => void,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open(method, url);
    request.withCredentials = true;
    request.setRequestHeader('accept', 'application/json');
    request.setRequestHeader('x-requested-with', 'stellwerk-console');
    request.setRequestHeader('content-type', contentType);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onprogress(event.loaded / event.total);
    };
    request.onload = () => {
      let body: unknown;
      try {
        body = request.responseText ? (JSON.parse(request.responseText) as unknown) : null;
      } catch {
        body = null;
      }
      if (request.status >= 200 && request.status < 300) {
        onprogress(1);
        resolve(body);
        return;
      }
      const error = (body as { error?: { code?: string; message?: string; details?: unknown[] } } | null)
        ?.error;
      reject(
        new ApiError(
          request.status,
          error?.code ?? `HTTP_${request.status}`,
          error?.message ?? `HTTP ${request.status} ${request.statusText}`.trim(),
          error?.details ?? [],
        ),
      );
    };
    request.onerror = () => reject(new ApiError(0, 'NETWORK_ERROR', 'The upload was interrupted'));
    request.send(file);
  });
}
