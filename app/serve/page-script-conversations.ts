/**
 * The conversations section of the `axon serve` page's script (page-script.ts puts it in place, so `/page.js` and its
 * integrity hash are one text): the page's conversation id, each turn shown under the last, starting a new
 * conversation, and reopening a past one. Plain JavaScript, using the helpers defined before it in the script.
 */
export const PAGE_CONVERSATION_SCRIPT = `// --- Conversations: every question asked on the page follows the ones before it, until a new conversation ---

/** The conversation the page is in: a new one per page load, or one reopened from the list. */
let conversationId = newConversationId();

function newConversationId() {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return "page-" + [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The searched question beside the typed one (when the follow-up was rewritten), and the turn under the last. */
function onTurn(data) {
  if (data.searchedQuestion) {
    $("searched").textContent = "Searched as: " + data.searchedQuestion;
    $("searched").classList.remove("hidden");
  }
  if (data.conversationId === conversationId) addTurn(data.question, data.searchedQuestion, data.answer);
}

function addTurn(question, searched, answer) {
  $("thread").classList.remove("hidden");
  const item = el("li", {}, el("div", { class: "turn-question", text: question }));
  if (searched && searched !== question) item.append(el("div", { class: "searched", text: "searched as: " + searched }));
  item.append(el("div", { class: "turn-answer", text: answer || "" }));
  $("turns").append(item);
}

function startConversation() {
  conversationId = newConversationId();
  $("turns").textContent = "";
  $("thread").classList.add("hidden");
  clearViews();
  $("question").value = "";
  setStatus("New conversation.");
  $("question").focus();
}

async function loadConversations() {
  const response = await api("/api/conversations");
  if (!response.ok) return;
  const { conversations } = await response.json();
  const list = $("conversations");
  list.textContent = "";
  for (const info of conversations.slice(0, 100)) {
    const when = new Date(info.updatedAt).toLocaleString();
    list.append(el("li", {}, el("button", { type: "button", "data-conversation": info.id, onclick: () => openConversation(info.id) },
      document.createTextNode(info.firstQuestion), el("small", { text: when + " · " + info.turns + (info.turns === 1 ? " turn" : " turns") }))));
  }
}

/** Continue a past conversation: its turns are shown, and the next question follows them. */
async function openConversation(id) {
  const response = await api("/api/conversations/" + encodeURIComponent(id));
  const body = await response.json();
  if (!response.ok) return setStatus(body.error);
  conversationId = id;
  $("turns").textContent = "";
  clearViews();
  for (const turn of body.turns) addTurn(turn.question, turn.searchedQuestion, turn.answer);
  setStatus("Continuing a conversation of " + body.turns.length + (body.turns.length === 1 ? " turn." : " turns."));
  $("question").value = "";
  $("question").focus();
}

`;
