import { v7 as uuidv7, validate } from 'uuid';

/** Time-ordered UUIDs keep B-tree inserts local and sort by creation. */
export const newId = (): string => uuidv7();
export const isUuid = (value: string): boolean => validate(value);
