// Refuses the NUL character (U+0000) in request data with a 422 before validation: PostgreSQL stores none in text or
// jsonb, so one that got through would fail its query and answer 500.
import type { FastifySchemaCompiler } from 'fastify';
import { validationFailed } from '../shared/errors.js';
import { fieldName } from './errors.js';

const NUL_ERROR = 'must not contain the NUL character (\\u0000)';
/** At most this many fields are named in one 422: a CSV import could carry a NUL in every cell. */
const MAX_REPORTED = 100;

/** A container met in the walk and where it sits (its parent's entry, its key there); paths are spelled out on a hit. */
interface Entry {
  container: object;
  parent: number;
  key: string | number;
}

function pathTo(queue: Entry[], index: number, key: string | number): string[] {
  const path = [String(key)];
  for (let i = index; i > 0; i = queue[i]!.parent) path.push(String(queue[i]!.key));
  return path.reverse();
}

/** Looks at one member of the container at `queue[index]`; true once enough paths are found. */
function visit(queue: Entry[], found: string[][], index: number, key: string | number, value: unknown): boolean {
  if ((typeof key === 'string' && key.includes('\0')) || (typeof value === 'string' && value.includes('\0'))) {
    return found.push(pathTo(queue, index, key)) === MAX_REPORTED;
  }
  if (typeof value === 'object' && value !== null) queue.push({ container: value, parent: index, key });
  return false;
}

/** The paths of the strings and object keys holding a NUL in a parsed request part, shallowest first. */
function nulPaths(data: unknown): string[][] {
  const found: string[][] = [];
  if (typeof data !== 'object' || data === null) return found;
  // Breadth-first over a queue rather than recursion, so a deeply nested JSON body cannot overflow the stack, and
  // without copying paths, so depth costs nothing more. Arrays by index: for…in would make a string of each index.
  const queue: Entry[] = [{ container: data, parent: -1, key: '' }];
  for (let i = 0; i < queue.length; i++) {
    const container = queue[i]!.container as Record<string, unknown>;
    if (Array.isArray(container)) {
      for (let j = 0; j < container.length; j++) if (visit(queue, found, i, j, container[j])) return found;
    } else {
      for (const key in container) if (visit(queue, found, i, key, container[key])) return found;
    }
  }
  return found;
}

/** `compile`'s validators, each run only once the data of its part (body, querystring, params, headers) holds no NUL. */
export function refusingNul<T>(compile: FastifySchemaCompiler<T>): FastifySchemaCompiler<T> {
  return (route) => {
    const validate = compile(route);
    const part = route.httpPart ?? 'body';
    return (data) => {
      const paths = nulPaths(data);
      if (paths.length === 0) return validate(data);
      // Fastify keeps a returned Error as it is (adding only its part), and the error handler sends an AppError unchanged.
      return { error: validationFailed(paths.map((path) => ({ field: fieldName(part, path), error: NUL_ERROR }))) };
    };
  };
}
