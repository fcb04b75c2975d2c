import { ProviderInstance } from '../../loading/index.js';
import { None, StarList, StarStruct, StarTuple, type Value } from '../../starlark/index.js';

/**
 * What a rule or aspect implementation returned, as a list of values: a list or tuple, one
 * provider instance, a legacy struct (its `providers`), or None (nothing). Undefined for anything
 * else, which each caller reports in its own words.
 */
export function returnedValues(returned: Value): readonly Value[] | undefined {
  if (returned === None) return [];
  if (returned instanceof StarList || returned instanceof StarTuple) return returned.elems;
  if (returned instanceof ProviderInstance) return [returned];
  if (returned instanceof StarStruct) {
    const p = returned.attr('providers');
    return p instanceof StarList || p instanceof StarTuple ? p.elems : [];
  }
  return undefined;
}
