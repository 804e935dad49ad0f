/** Where the console shows one alarm entry (mails and webhooks link to it). */
export const alarmLink = (publicUrl: string, alarmId: string): string =>
  `${publicUrl.replace(/\/+$/, '')}/#/alarms?id=${alarmId}`;
