// Small DOM helpers shared by the extension's pages (side panel, options). Text goes in only as
// textContent.

/** A new element with a class and text. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Makes `button` act only when clicked twice: the first click shows `armedText` (class
 * `armed`) for five seconds, a second click within them runs `act`. For deleting things. */
export function onSecondClick(button, armedText, act) {
  const idleText = button.textContent;
  let armed = null;
  const disarm = () => {
    clearTimeout(armed);
    armed = null;
    button.textContent = idleText;
    button.classList.remove('armed');
  };
  button.addEventListener('click', () => {
    if (!armed) {
      button.textContent = armedText;
      button.classList.add('armed');
      armed = setTimeout(disarm, 5_000);
      return;
    }
    disarm();
    act();
  });
}
