import { request } from 'undici';

/** The status of one HTTP request, its body read and dropped (an unread body keeps the connection busy). */
export async function httpStatus(url: string, options: Parameters<typeof request>[1] = {}): Promise<number> {
  const answer = await request(url, options);
  await answer.body.dump();
  return answer.statusCode;
}
