/** Operation names: `{instance}/operations/{id}`, the instance part (and its slash) omitted for the default instance. */
export function operationName(instanceName: string, id: string): string {
  return `${instanceName === '' ? '' : `${instanceName}/`}operations/${id}`;
}

/**
 * The instance an operation name belongs to, read from the name alone (so a caller can be authorised
 * before anything is looked up); undefined when the name is not one this scheduler makes.
 */
export function instanceOfOperationName(name: string): string | undefined {
  const segments = name.split('/');
  if (segments.length < 2 || segments.at(-2) !== 'operations' || segments.at(-1) === '') return undefined;
  return segments.slice(0, -2).join('/');
}
