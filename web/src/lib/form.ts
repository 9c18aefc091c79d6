/** A form's fields as trimmed text: `text('name')`, '' when absent or not text. */
export function formText(form: HTMLFormElement): (key: string) => string {
  const data = new FormData(form);
  return (key) => {
    const value = data.get(key);
    return typeof value === 'string' ? value.trim() : '';
  };
}
