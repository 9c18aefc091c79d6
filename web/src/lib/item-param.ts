import { useLocation } from 'react-router';
import { itemOfPath, type ItemCollection } from './paths';

/** The item of the page's path (`/sessions/<segment>` → the session id), decoded as lib/paths.ts encodes it. */
export function useItemParam(collection: ItemCollection): string {
  return itemOfPath(useLocation().pathname, collection) ?? '';
}
