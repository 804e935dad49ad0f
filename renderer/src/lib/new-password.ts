/** Whether a repeated password differs from the first (not while the repetition is still empty). */
export const passwordsDiffer = (password: string, confirmation: string): boolean =>
  confirmation.length > 0 && confirmation !== password;
