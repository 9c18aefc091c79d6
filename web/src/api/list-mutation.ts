import { useMutation, useQueryClient } from '@tanstack/react-query';

/**
 * A change to the records of a list (create, delete): once it succeeds, the list (`listKey`)
 * is read again, then `onDone` runs with the answer (close a form, go to the new record).
 */
export function useListMutation<Input, Answer>(
  listKey: string,
  mutationFn: (input: Input) => Promise<Answer>,
  onDone?: (answer: Answer) => void,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: async (answer) => {
      await queryClient.invalidateQueries({ queryKey: [listKey] });
      onDone?.(answer);
    },
  });
}
